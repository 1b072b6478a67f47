import { AsyncLocalStorage } from 'node:async_hooks';

// One deadline for a whole read. A signals snapshot waits for the rollup, then runs several
// queries, each of which used to get the full read deadline of its own: a soak's heavy read took
// 34 s at the median and 51 s at most under a 30 s deadline. Inside withReadDeadline every step
// gets what is left of one deadline, so the read answers or fails with GOV_ERR_READ_TIMEOUT in time.

interface Deadline {
  /** performance.now() when the read's time is up. */
  atMs: number;
  /** The whole read's deadline, for the error message. */
  totalMs: number;
}

const scope = new AsyncLocalStorage<Deadline>();

/** Runs `fn` as one read with `ms` for all of it; a read already in scope keeps its earlier deadline. */
export function withReadDeadline<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const outer = scope.getStore();
  const atMs = performance.now() + ms;
  if (outer && outer.atMs <= atMs) return fn();
  return scope.run({ atMs, totalMs: ms }, fn);
}

/** What is left of the read's deadline in scope (0 once past it), or null outside withReadDeadline. */
export function readDeadlineLeft(): { leftMs: number; totalMs: number } | null {
  const d = scope.getStore();
  return d ? { leftMs: Math.max(0, d.atMs - performance.now()), totalMs: d.totalMs } : null;
}
