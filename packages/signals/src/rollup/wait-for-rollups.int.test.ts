import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadDeadlineError, type Store, createStore } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticSpanBatch, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';

// A signals read waits for the request rollup to take in what was acknowledged, but only as long as
// the read deadline: a backlog the refresh needs seconds for answers 503 at the deadline instead.

let dir: string;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

const START_NS = 1_760_000_000_000_000_000n;
const batch = (seed: number) =>
  syntheticSpanBatch(seed, { spans: 500, startNs: START_NS, spacingNs: 100_000_000n });

describe('reads waiting for the request rollup', () => {
  it('fail with GOV_ERR_READ_TIMEOUT at the read deadline while the refresh goes on, and a retry after it answers in full', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-rollup-deadline-'));
    const deadlineMs = 300;
    // No checkpoint meanwhile (by time or rows): the rollup waits for one, which is not what this measures.
    store = await createStore({
      dataDir: dir,
      readDeadlineMs: deadlineMs,
      checkpointIntervalMs: 3_600_000,
      checkpointRows: 10_000_000,
    });
    const signals = createSignals(store, testConfig({ signals: { lateness_ms: 0 } }), {
      now: () => Number(START_NS / 1_000_000n) + 3_600_000,
    });
    // A backlog the rollup has not seen: 200,000 spans take the refresh ~1 s on an idle 2-core machine
    // (100,000 took seconds once; since the refresh got faster, 0.6 s, within the old 1 s deadline).
    // The retry after it, a snapshot over 50,000 requests, takes ~80 ms: both ≥ 3× from the deadline.
    const traces = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const rows = batch(i);
      await store.writer.write(rows, []);
      for (const r of rows) traces.add(r.traceId);
    }

    let refreshDone = false;
    const refreshing = signals.refresh().finally(() => {
      refreshDone = true;
    });
    const atNs = START_NS + 3_600_000_000_000n;
    const startedMs = performance.now();
    const error = await signals.snapshot({ windowMs: 7_200_000, by: [], atNs }).then(
      () => null,
      (e: unknown) => e,
    );
    const waitedMs = performance.now() - startedMs;
    expect(error).toBeInstanceOf(ReadDeadlineError);
    expect((error as ReadDeadlineError).code).toBe('GOV_ERR_READ_TIMEOUT');
    expect((error as Error).message).toMatch(/request rollup .* retry/);
    // It answered while the refresh was still working, not after it.
    expect(refreshDone).toBe(false);
    console.log(`rollup wait: answered 503 after ${waitedMs.toFixed(0)} ms (deadline ${deadlineMs} ms)`);

    const refreshed = await refreshing;
    console.log(`the refresh took ${refreshed?.elapsedMs.toFixed(0)} ms for ${traces.size} traces`);
    const snapshot = await signals.snapshot({ windowMs: 7_200_000, by: [], atNs });
    expect(snapshot.groups[0]?.requests).toBe(traces.size);

    // At shutdown the refresh stops; a read still running answers from the rollups as they are.
    await store.writer.write(batch(1000), []);
    store.rollup.stop();
    const last = await signals.snapshot({ windowMs: 7_200_000, by: [], atNs });
    expect(last.groups[0]?.requests).toBe(traces.size);
  }, 120_000);

  it('share one deadline when one read makes several calls (signals.read): the watermark, then a snapshot up to it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-rollup-deadline-'));
    // Room for a small snapshot on a loaded machine; the pause outlasts it.
    const deadlineMs = 2000;
    store = await createStore({ dataDir: dir, readDeadlineMs: deadlineMs });
    const signals = createSignals(store, testConfig({ signals: { lateness_ms: 0 } }), {
      now: () => Number(START_NS / 1_000_000n) + 3_600_000,
    });
    await store.writer.write(batch(1), []);
    // Rolled up beforehand, so neither read below waits for the refresh.
    await signals.refresh();
    const pause = () => new Promise((resolve) => setTimeout(resolve, deadlineMs + 200));
    const watermarkThenSnapshot = async () => {
      const atNs = (await signals.watermarkNs()) ?? START_NS;
      await pause();
      return signals.snapshot({ windowMs: 7_200_000, by: [], atNs });
    };
    // Two reads, each within its own deadline, answer…
    expect((await watermarkThenSnapshot()).groups[0]?.requests).toBeGreaterThan(0);
    // …as one read, the snapshot starts past the read's deadline and is refused without running.
    const error = await signals.read(watermarkThenSnapshot).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ReadDeadlineError);
    expect((error as Error).message).toContain(`${deadlineMs} ms`);
  }, 60_000);
});
