import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from './create-store.ts';
import { readAllThreadsCpuUs, readThreadId } from './ingest-cpu/thread-cpu-clock.ts';
import { BACKGROUND_NICE } from './lower-background-priority.ts';

// The thread that appends and commits (acknowledgements wait for it) keeps its priority; the
// threads DuckDB runs a heavy read on yield the CPU to it.

let dir: string;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('background thread priority', () => {
  it('runs DuckDB reads on threads at nice 10 while the writing thread keeps its priority', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-nice-'));
    const self = readThreadId()!;
    const before = getPriority(self);
    store = await createStore({ dataDir: dir, readDeadlineMs: 2_000 });
    const startCpu = readAllThreadsCpuUs();
    // A read that keeps DuckDB's threads busy until its deadline interrupts it.
    await store.query('SELECT sum(hash(i)) FROM range(100000000000) t(i)').catch(() => undefined);
    const busy = [...readAllThreadsCpuUs()]
      .filter(([tid, us]) => tid !== self && us - (startCpu.get(tid) ?? 0) > 200_000)
      .map(([tid]) => tid);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.map((tid) => getPriority(tid))).toEqual(busy.map(() => BACKGROUND_NICE));
    expect(getPriority(self)).toBe(before);
  }, 60_000);
});
