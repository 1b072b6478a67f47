import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SpanRow, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from './create-store.ts';

// A span is readable through `spans` as soon as its write is acknowledged, also when the writer
// committed it to the ingest stage because the main database was checkpointing.

let dir: string;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

const classifier = createHopClassifier();
function batch(seed: number): SpanRow[] {
  return normalizeTraceRequest(
    syntheticTraceRequest({
      spans: 200,
      seed,
      startNs: 1_760_000_000_000_000_000n + BigInt(seed) * 1_000_000_000n,
      idPrefix: seed.toString(16).padStart(8, '0'),
    }),
    { classifier, aliases: {} },
  ).rows.slice(0, 200);
}

describe('read-your-writes', () => {
  it('shows every acknowledged batch through `spans` at once, while checkpoints run', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-ryw-'));
    // A checkpoint after every write keeps the writer switching to the stage and back.
    store = await createStore({ dataDir: dir, checkpointRows: 1, checkpointIntervalMs: 10 });
    const batches = Array.from({ length: 30 }, (_, i) => batch(i + 1));
    const background = Array.from({ length: 30 }, (_, i) => batch(1000 + i));
    let staged = 0;
    const missing: number[] = [];
    for (let i = 0; i < batches.length; i++) {
      // Other clients keep writing, so checkpoints have data to move.
      const other = store.writer.write(background[i]!, []);
      await store.writer.write(batches[i]!, []);
      if (store.writer.stats().stagedRows > 0) staged++;
      const prefix = (i + 1).toString(16).padStart(8, '0');
      const result = await store.runUserQuery(
        `SELECT count(*) AS n FROM spans WHERE trace_id LIKE '${prefix}%'`,
        { limit: 1, timeoutMs: 10_000 },
      );
      const seen = Number(result.rows[0]?.[0]);
      if (seen !== batches[i]!.length) missing.push(i);
      await other;
    }
    console.log(`read-your-writes: ${staged} of ${batches.length} acks landed while rows were staged`);
    expect(staged).toBeGreaterThan(0);
    expect(missing).toEqual([]);
    await store.writer.checkpoint();
    const total = await store.runUserQuery('SELECT count(*) FROM spans', { limit: 1, timeoutMs: 10_000 });
    expect(Number(total.rows[0]?.[0])).toBe(60 * 200);
  });
});
