import { STORE_CONNECTIONS } from '@governor/store';

// libuv reads UV_THREADPOOL_SIZE once, when its pool starts — before any of Governor's code runs —
// so `governor start` can only check it (apps/server/threadpool-preload.cjs sets it). Threads beyond
// the store's connections are for gunzip, fs and dns.

export const THREADPOOL_RESERVE = 2;

/** The pool size libuv uses for this value of UV_THREADPOOL_SIZE (default 4, at most 1024). */
export function libuvPoolSize(value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || value === '' || !Number.isFinite(n)) return 4;
  return Math.min(1024, Math.max(1, Math.trunc(n)));
}

/** A warning for the log when the pool is smaller than the store needs, else null. */
export function threadpoolWarning(value: string | undefined): string | null {
  const size = libuvPoolSize(value);
  const needed = STORE_CONNECTIONS + THREADPOOL_RESERVE;
  if (size >= needed) return null;
  return `libuv's thread pool has ${size} threads (UV_THREADPOOL_SIZE) but DuckDB statements can hold ${STORE_CONNECTIONS} at once: acknowledgements will wait behind long reads. Start Governor with \`pnpm governor start\` (which preloads apps/server/threadpool-preload.cjs) or set UV_THREADPOOL_SIZE=${needed} or more in its environment.`;
}
