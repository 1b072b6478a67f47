import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BatchWriter, type Store, createStore } from '@governor/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticSpanBatch, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';

// The background refresh keeps the rollup moving through a checkpoint: it takes in what span_store
// holds and does not wait for the spans parked in the ingest stage, while a read still waits for
// them. A real store and refresher; the writer is the real one except that its checkpoint cycle is
// held open (whenMoved pending, rows staged since a known time), which a real cycle is for seconds.

const START_NS = 1_760_000_000_000_000_000n;
const batch = (seed: number) =>
  syntheticSpanBatch(seed, { spans: 500, startNs: START_NS, spacingNs: 100_000_000n });

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-refresh-committed-'));
  store = await createStore({ dataDir: dir, checkpointIntervalMs: 3_600_000, checkpointRows: 10_000_000 });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const settle = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise.then(() => 'done' as const),
    new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms)),
  ]);

describe('the background refresh during a checkpoint', () => {
  it('takes in the spans in span_store without waiting for the staged ones; a read waits for them', async () => {
    for (let i = 0; i < 4; i++) await store.writer.write(batch(i), []);
    const stagedSinceMs = Date.now();
    let moved!: () => void;
    const cycle = new Promise<void>((resolve) => {
      moved = resolve;
    });
    const writer: BatchWriter = {
      ...store.writer,
      whenMoved: () => cycle,
      stats: () => ({ ...store.writer.stats(), stagedRows: 500, stagedSpans: 500, stagedSinceMs }),
    };
    const signals = createSignals({ ...store, writer }, testConfig({ signals: { lateness_ms: 0 } }));

    const background = signals.refresh({ background: true });
    expect(await settle(background, 30_000)).toBe('done');
    expect((await background)?.tracesTouched).toBeGreaterThan(0);
    const [facts] = await store.query<{ spans: number }>(
      'SELECT sum(span_count)::INTEGER AS spans FROM rollup.main.request_facts',
    );
    expect(facts?.spans).toBe(2_000);
    // Behind by the time since the writer began staging: the staged spans are not rolled up.
    const lag = signals.rollupLag();
    expect(lag?.ms).toBeGreaterThanOrEqual(Date.now() - stagedSinceMs - 5);
    expect(lag?.ms).toBeGreaterThan(0);

    // A read's refresh waits for the staged spans to reach span_store.
    const read = signals.refresh();
    expect(await settle(read, 300)).toBe('pending');
    moved();
    expect(await settle(read, 30_000)).toBe('done');
  }, 60_000);
});
