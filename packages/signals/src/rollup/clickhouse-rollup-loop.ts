import type { SpanRow } from '@governor/otlp';
import type { RollupLag } from './refresh-request-facts.ts';
import type { ClickHouseRollup, ClickHouseRollupResult } from './roll-up-on-clickhouse.ts';

// A node's rollup loop on ClickHouse: the writer hands it each batch once ClickHouse acknowledged
// it; every interval it rolls up what accumulated in one call (one scratch refresh for all of it),
// so a burst of small batches costs one run. Runs never overlap; a failed run keeps its spans for
// the next one (the refresh is idempotent: the facts are recomputed from every span of the traces).
// What a node holds here is lost with the node — recovery re-rolls the traces with spans past the
// node's recorded watermark (docs/scale-out-design.md, decision 4; not built yet).

export interface ClickHouseRollupLoop {
  /** Spans ClickHouse acknowledged, to roll up at the next run. */
  add(spans: readonly SpanRow[]): void;
  /** Runs now with whatever accumulated (resolves when that run is done). */
  flush(): Promise<ClickHouseRollupResult | null>;
  /** Spans waiting for a run, and the event time of the newest span rolled up. */
  pending(): { spans: number; newestRolledUpNs: bigint | null };
  /**
   * As the embedded refresher's lag: `ms` 0 when nothing waits, else the wall-clock time since the
   * oldest waiting span was handed over; `catchUpMs` the waiting spans at the recent runs' cost per span.
   */
  lag(): RollupLag;
  stop(): Promise<void>;
}

export interface ClickHouseRollupLoopOptions {
  intervalMs: number;
  /** A version for each run's rows, increasing (default: wall clock in ns). */
  nextVersion?: () => bigint;
  onError?: (error: Error) => void;
  /**
   * Spans one run takes at most (default 20,000): a run's steps on the main thread (rows into the
   * scratch store, facts out of it) grow with its size, and acknowledgements wait while they run.
   * A larger backlog is taken by runs back to back.
   */
  maxSpansPerRun?: number;
}

export function startClickHouseRollupLoop(
  rollup: ClickHouseRollup,
  options: ClickHouseRollupLoopOptions,
): ClickHouseRollupLoop {
  let waiting: SpanRow[] = [];
  const maxPerRun = options.maxSpansPerRun ?? 20_000;
  let newestRolledUpNs: bigint | null = null;
  let running: Promise<ClickHouseRollupResult | null> = Promise.resolve(null);
  let stopped = false;
  let lastVersion = 0n;
  /** When the oldest span still waiting was added. */
  let waitingSinceMs = 0;
  let failing = false;
  /** The batch of the run under way, and when its oldest span was added. */
  let inFlight = { spans: 0, sinceMs: 0 };
  /** Wall-clock ms per span of recent runs (half weight to each new run). */
  let msPerSpan: number | null = null;
  const nextVersion =
    options.nextVersion ??
    (() => {
      const now = BigInt(Date.now()) * 1_000_000n;
      lastVersion = now > lastVersion ? now : lastVersion + 1n;
      return lastVersion;
    });

  const runOnce = async (): Promise<ClickHouseRollupResult | null> => {
    if (waiting.length === 0) return null;
    const batch = waiting.length > maxPerRun ? waiting.splice(0, maxPerRun) : waiting;
    const batchSinceMs = waitingSinceMs;
    if (batch === waiting) waiting = [];
    inFlight = { spans: batch.length, sinceMs: batchSinceMs };
    const startedMs = performance.now();
    try {
      const result = await rollup.rollUp(batch, nextVersion());
      for (const s of batch)
        if (newestRolledUpNs === null || s.endNs > newestRolledUpNs) newestRolledUpNs = s.endNs;
      const perSpan = (performance.now() - startedMs) / batch.length;
      msPerSpan = msPerSpan === null ? perSpan : (msPerSpan + perSpan) / 2;
      failing = false;
      return result;
    } catch (error) {
      failing = true;
      // Keep them for the next run, ahead of what arrived meanwhile.
      waiting = [...batch, ...waiting];
      waitingSinceMs = batchSinceMs;
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
      return null;
    } finally {
      inFlight = { spans: 0, sinceMs: 0 };
    }
  };
  /** Runs until nothing waits (a run that fails stops the series: its spans wait for the next tick). */
  const runAll = async (): Promise<ClickHouseRollupResult | null> => {
    let last: ClickHouseRollupResult | null = null;
    while (waiting.length > 0) {
      const result = await runOnce();
      if (result === null) break;
      last = result;
    }
    return last;
  };
  const run = () => {
    running = running.then(runAll);
    return running;
  };
  const timer = setInterval(() => {
    if (!stopped) void run();
  }, options.intervalMs);

  return {
    add(spans) {
      if (stopped) throw new Error('the rollup loop has stopped');
      if (spans.length > 0 && waiting.length === 0) waitingSinceMs = performance.now();
      for (const s of spans) waiting.push(s);
    },
    flush: run,
    pending: () => ({ spans: waiting.length, newestRolledUpNs }),
    lag() {
      const spans = waiting.length + inFlight.spans;
      if (spans === 0) return { ms: 0, catchUpMs: 0, failing };
      const ms = performance.now() - (inFlight.spans > 0 ? inFlight.sinceMs : waitingSinceMs);
      return { ms, catchUpMs: msPerSpan === null ? ms : spans * msPerSpan, failing };
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
