import { readThreadCpuUs, readThreadCpuUsOf } from './thread-cpu-clock.ts';

// CPU time per ingest stage, so the budget of a span is visible (`governor bench ingest` prints
// it from /metrics). Three kinds of stage:
// - synchronous steps on the main thread (append, commit) and in a decode worker (decode,
//   normalize): that thread's CPU clock before and after;
// - steps DuckDB runs on its own threads (checkpoint, rollup refresh): the CPU of every thread
//   that is neither the main thread nor a decode worker while the step runs, shared equally
//   between the steps running at the same time (an estimate: V8's GC helpers run there too);
// - what is left of the main thread (HTTP, body read, routing, responses): the caller subtracts.

export interface IngestCpuSnapshot {
  /** CPU microseconds charged to each stage since start. */
  stagesUs: Record<string, number>;
  /** The part of stagesUs that ran on the main thread. */
  mainThreadStagesUs: number;
  /** The main thread's CPU microseconds since it started. */
  mainThreadUs: number;
  /** CPU microseconds of the foreground threads (the decode workers) now alive. */
  foregroundThreadsUs: number;
  /** Every other thread (DuckDB, libuv, V8's helpers), exited ones included. */
  backgroundThreadsUs: number;
  /** All threads, as process.cpuUsage() reports it. */
  processUs: number;
}

export interface IngestCpu {
  /** Charges CPU measured elsewhere (a decode worker's own clock), or on the main thread. */
  add(stage: string, us: number, onMainThread?: boolean): void;
  /** Runs a synchronous step on the main thread and charges its CPU to `stage`. */
  measure<T>(stage: string, fn: () => T): T;
  /** Runs a step whose work happens on DuckDB's threads and charges theirs (call on the main thread). */
  measureBackground<T>(stage: string, fn: () => Promise<T>): Promise<T>;
  /** Threads that charge their own stages (the decode workers), left out of the background. */
  setForegroundThreads(tids: () => readonly number[]): void;
  snapshot(): IngestCpuSnapshot;
}

export function createIngestCpu(): IngestCpu {
  const stagesUs: Record<string, number> = {};
  let mainThreadStagesUs = 0;
  let foreground: () => readonly number[] = () => [];
  const add = (stage: string, us: number, onMainThread = false) => {
    stagesUs[stage] = (stagesUs[stage] ?? 0) + us;
    if (onMainThread) mainThreadStagesUs += us;
  };
  const processUs = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const foregroundUs = () => foreground().reduce((sum, tid) => sum + readThreadCpuUsOf(tid), 0);
  const backgroundUs = () => processUs() - readThreadCpuUs() - foregroundUs();

  // Background steps running now, by stage; their CPU is settled at every start, end and snapshot.
  const running = new Map<string, number>();
  let runningCount = 0;
  let lastBackgroundUs = 0;
  const settle = () => {
    // The clocks are read one after another, so a reading can come out a little below the last:
    // charge only past the highest reading, so the charges never add up to more than the threads ran.
    const now = backgroundUs();
    if (now <= lastBackgroundUs) return;
    const delta = now - lastBackgroundUs;
    lastBackgroundUs = now;
    if (runningCount === 0) return;
    for (const [stage, n] of running) add(stage, (delta * n) / runningCount);
  };

  return {
    add,
    measure(stage, fn) {
      const started = readThreadCpuUs();
      try {
        return fn();
      } finally {
        add(stage, readThreadCpuUs() - started, true);
      }
    },
    async measureBackground(stage, fn) {
      settle();
      running.set(stage, (running.get(stage) ?? 0) + 1);
      runningCount++;
      try {
        return await fn();
      } finally {
        settle();
        const n = (running.get(stage) ?? 1) - 1;
        if (n === 0) running.delete(stage);
        else running.set(stage, n);
        runningCount--;
      }
    },
    setForegroundThreads(tids) {
      foreground = tids;
    },
    snapshot() {
      settle();
      const main = readThreadCpuUs();
      const fg = foregroundUs();
      const total = processUs();
      return {
        stagesUs: { ...stagesUs },
        mainThreadStagesUs,
        mainThreadUs: main,
        foregroundThreadsUs: fg,
        backgroundThreadsUs: total - main - fg,
        processUs: total,
      };
    },
  };
}
