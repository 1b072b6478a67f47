import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { readThreadId } from './ingest-cpu/thread-cpu-clock.ts';

// Acknowledgements wait for the appends and the commit, which run on the thread that writes (Node's
// main thread). DuckDB runs every other statement — heavy reads, checkpoints, stage moves, the
// rollup refresh — on its own scheduler threads and on libuv's pool. On two cores those threads
// took the CPU from the writer: in a 30 s probe at 7,000 spans/s with signals reads back to back
// (load average 7), 18.7 s of the flushes' 34.5 s were spent runnable but waiting for a CPU, and
// ack p99 was 1.35 s. With the other threads at nice 10 the wait fell to 5.1 s of 19.1 s and ack
// p99 to 216 ms; the reads still get every CPU cycle the writer leaves.

/** Linux nice value of the threads that are not on the acknowledgement path. */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the CPU priority of every thread of the process that exists now, except the calling one,
 * to `nice` (Linux; elsewhere it does nothing). Call it right after opening DuckDB, before starting
 * threads that acknowledge (decode workers): threads started later keep their priority. Only
 * lowers: raising a priority again needs privileges. Returns the threads lowered.
 */
export function lowerBackgroundThreadPriority(nice = BACKGROUND_NICE): number[] {
  if (process.platform !== 'linux') return [];
  const self = readThreadId();
  let tids: number[];
  try {
    tids = readdirSync('/proc/self/task').map(Number);
  } catch {
    return [];
  }
  const lowered: number[] = [];
  for (const tid of tids) {
    if (tid === self) continue;
    try {
      if (getPriority(tid) >= nice) continue;
      setPriority(tid, nice);
      lowered.push(tid);
    } catch {
      // The thread ended between the listing and the call.
    }
  }
  return lowered;
}
