import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpanRow } from '@governor/otlp';
import { type Store, createStore } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticSpanBatch, testConfig } from '../test/store-harness.ts';
import { createSignals } from './create-signals.ts';

// An acknowledged span is in the signals, the trace list and its trace's waterfall as soon as its
// write is acknowledged, also when the writer committed it to the ingest stage because the main
// database was checkpointing (the request rollup reads span_store by rowid).

let dir: string;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

const START_NS = 1_760_000_000_000_000_000n;
const batch = (seed: number) =>
  syntheticSpanBatch(seed, { spans: 200, startNs: START_NS, spacingNs: 1_000_000_000n });

describe('read-your-writes for signals and traces', () => {
  it('counts, lists and shows every acknowledged trace at once, while checkpoints run', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-signals-ryw-'));
    // A checkpoint after every write keeps the writer switching to the stage and back.
    store = await createStore({ dataDir: dir, checkpointRows: 1, checkpointIntervalMs: 10 });
    const signals = createSignals(store, testConfig({ signals: { lateness_ms: 0 } }), {
      now: () => Number(START_NS / 1_000_000n) + 3_600_000,
    });
    const atNs = START_NS + 3_600_000_000_000n;
    let staged = 0;
    const written = new Set<string>();
    const write = async (rows: SpanRow[]) => {
      await store!.writer.write(rows, []);
      for (const r of rows) written.add(r.traceId);
    };
    const missing: string[] = [];
    for (let i = 1; i <= 25; i++) {
      // Another client writes back to back while a checkpoint runs, until its rows land in the
      // stage; then this batch is written.
      void store.writer.checkpoint();
      for (let k = 0; k < 20 && store.writer.stats().stagedRows === 0; k++)
        await write(batch(1000 + i * 20 + k));
      const rows = batch(i);
      await write(rows);
      if (store.writer.stats().stagedRows > 0) staged++;
      const ids = [...new Set(rows.map((r) => r.traceId))];
      const last = ids.at(-1)!;
      const waterfall = await signals.trace(last);
      if (waterfall?.spans.length !== rows.filter((r) => r.traceId === last).length)
        missing.push(`batch ${i}: /api/traces/:id`);
      const listed = await signals.traces({ fromNs: START_NS, toNs: atNs, limit: 100_000 });
      if (!ids.every((id) => listed.some((t) => t.traceId === id))) missing.push(`batch ${i}: /api/traces`);
      const snapshot = await signals.snapshot({ windowMs: 3_600_000 * 2, by: [], atNs });
      if (snapshot.groups[0]?.requests !== written.size)
        missing.push(`batch ${i}: /api/signals (${snapshot.groups[0]?.requests} of ${written.size})`);
    }
    console.log(`signals read-your-writes: ${staged} of 25 acks landed while rows were staged`);
    expect(staged).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  }, 120_000);
});
