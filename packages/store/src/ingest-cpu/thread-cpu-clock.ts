import { closeSync, openSync, readFileSync, readSync, readdirSync, readlinkSync } from 'node:fs';

// CPU time of one thread, for the ingest stage counters. Node 20 has no per-thread CPU clock
// (process.cpuUsage() sums every thread, the decode workers' and DuckDB's included), so on Linux
// this reads the scheduler's on-CPU nanoseconds of the calling thread from /proc (≈8 µs a read,
// a few per request). Elsewhere it falls back to wall time, which counts waiting for a CPU too.

let fd: number | null | undefined;
const buffer = Buffer.alloc(128);

/** Whether the counters are CPU time (Linux) rather than wall time. */
export const THREAD_CPU_CLOCK_IS_CPU_TIME = process.platform === 'linux';

/** On-CPU microseconds of the calling thread so far (wall microseconds where /proc is missing). */
export function readThreadCpuUs(): number {
  if (fd === undefined) {
    try {
      // /proc/thread-self resolves when opened, so the descriptor stays bound to this thread; the
      // module is loaded once per thread (each worker has its own copy of this state).
      fd = THREAD_CPU_CLOCK_IS_CPU_TIME ? openSync('/proc/thread-self/schedstat', 'r') : null;
    } catch {
      fd = null;
    }
  }
  if (fd === null) return performance.now() * 1000;
  const n = readSync(fd, buffer, 0, buffer.length, 0);
  const text = buffer.toString('latin1', 0, n);
  return Number(text.slice(0, text.indexOf(' '))) / 1000;
}

/** The calling thread's id in /proc/self/task (null off Linux). */
export function readThreadId(): number | null {
  try {
    const link = readlinkSync('/proc/thread-self');
    return Number(link.slice(link.lastIndexOf('/') + 1));
  } catch {
    return null;
  }
}

/** On-CPU microseconds of every thread of this process, by thread id (empty off Linux). */
export function readAllThreadsCpuUs(): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    let taskFd: number | null = null;
    try {
      taskFd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
      const n = readSync(taskFd, buffer, 0, buffer.length, 0);
      const text = buffer.toString('latin1', 0, n);
      threads.set(Number(tid), Number(text.slice(0, text.indexOf(' '))) / 1000);
    } catch {
      // The thread ended between the listing and the read.
    } finally {
      if (taskFd !== null) closeSync(taskFd);
    }
  }
  return threads;
}

/** On-CPU microseconds of one thread of this process (0 when it is gone or off Linux). */
export function readThreadCpuUsOf(tid: number): number {
  try {
    const text = readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1');
    return Number(text.slice(0, text.indexOf(' '))) / 1000;
  } catch {
    return 0;
  }
}
