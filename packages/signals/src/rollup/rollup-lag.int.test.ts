import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Store, createStore } from '@governor/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticSpanBatch, testConfig } from '../../test/store-harness.ts';
import { type Signals, createSignals } from '../create-signals.ts';

// Ingest refuses span exports only while the rollup is behind by the clock and by its catch-up time
// (what a read would wait for): a checkpoint stalls the rollup for seconds with a handful of spans
// waiting, and refusing exports would not end the stall. A real store and refresher: the lag grows
// with the time nothing is rolled up, the catch-up time with the spans waiting.

const START_NS = 1_760_000_000_000_000_000n;
const batch = (seed: number) =>
  syntheticSpanBatch(seed, { spans: 500, startNs: START_NS, spacingNs: 100_000_000n });

let dir: string;
let store: Store;
let signals: Signals;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-rollup-lag-'));
  // No checkpoint meanwhile: this measures the refresher's figures, not a checkpoint's stall.
  store = await createStore({ dataDir: dir, checkpointIntervalMs: 3_600_000, checkpointRows: 10_000_000 });
  signals = createSignals(store, testConfig({ signals: { lateness_ms: 0 } }));
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lag = () => {
  const l = signals.rollupLag();
  if (!l) throw new Error('a rollup-backed Signals has a lag');
  return l;
};

describe('the request rollup lag', () => {
  it('is the wall-clock time until a refresh has been timed, then the catch-up time follows the spans waiting', async () => {
    expect(lag()).toMatchObject({ ms: 0, catchUpMs: 0, failing: false });

    // Before any refresh was timed, the catch-up time is the wall-clock lag.
    await store.writer.write(batch(0), []);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const untimed = lag();
    expect(untimed.ms).toBeGreaterThanOrEqual(300);
    expect(untimed.catchUpMs).toBe(untimed.ms);

    // Time a refresh over 10,000 spans.
    for (let i = 1; i <= 20; i++) await store.writer.write(batch(i), []);
    const timed = await signals.refresh();
    expect(timed?.tracesTouched).toBeGreaterThan(0);
    expect(lag()).toMatchObject({ ms: 0, catchUpMs: 0 });
    const msPerSpan = (timed?.elapsedMs ?? 0) / 10_500;

    // A stall with 500 spans waiting: the wall-clock lag grows with the stall, the catch-up time
    // stays what 500 spans take at the refresh's speed.
    await store.writer.write(batch(100), []);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stalled = lag();
    expect(stalled.ms).toBeGreaterThanOrEqual(1500);
    expect(stalled.catchUpMs).toBeGreaterThan(0);
    expect(stalled.catchUpMs).toBeLessThan(stalled.ms / 2);
    console.log(
      `stall of ${stalled.ms} ms with 500 spans waiting: catch-up ${stalled.catchUpMs.toFixed(0)} ms (refresh at ${(msPerSpan * 1000).toFixed(1)} µs per span)`,
    );

    // Ten times the spans waiting, ten times the catch-up time: a rollup that falls behind shows.
    for (let i = 101; i < 110; i++) await store.writer.write(batch(i), []);
    expect(lag().catchUpMs).toBeCloseTo(stalled.catchUpMs * 10, 6);

    await signals.refresh();
    expect(lag()).toMatchObject({ ms: 0, catchUpMs: 0, failing: false });
  }, 120_000);
});
