import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type SpanRow, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from './create-store.ts';
import { STAGE_FILE, splitStatements } from './ingest-stage.ts';

// A full disk (ENOSPC) or a kill -9 can stop the stage rebuild after any of its statements. Each
// such stop is reproduced here by running the rebuild's first k statements on a real data dir and
// closing DuckDB without a commit; the data dir must still start, with every row it held.

const REBUILD = splitStatements(readFileSync(new URL('./ingest-stage.sql', import.meta.url), 'utf8'));

function spanRows(count: number, seed: number): SpanRow[] {
  return normalizeTraceRequest(
    syntheticTraceRequest({ spans: count, seed, startNs: 1_760_000_000_000_000_000n }),
    { classifier: createHopClassifier(), aliases: {} },
  ).rows.slice(0, count);
}

const dirs: string[] = [];
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function countSpans(s: Store): Promise<number> {
  const [row] = await s.query<{ n: number }>('SELECT count(*) AS n FROM span_store');
  return row!.n;
}

describe('stage rebuild interrupted between any two statements', () => {
  it('has statements to interrupt', () => {
    expect(REBUILD.length).toBeGreaterThanOrEqual(4);
  });

  for (let k = 1; k < REBUILD.length; k++) {
    it(`starts after a stop following statement ${k}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'governor-stage-'));
      dirs.push(dir);
      store = await createStore({ dataDir: dir });
      await store.writer.write(spanRows(10, k), []);
      await store.close();
      store = null;

      const instance = await DuckDBInstance.create(join(dir, 'governor.duckdb'));
      const c = await instance.connect();
      await c.run(`ATTACH '${join(dir, STAGE_FILE)}' AS stage`);
      for (const statement of REBUILD.slice(0, k)) await c.run(statement);
      // The process dies here: nothing after statement k runs, an open transaction never commits.
      c.closeSync();
      instance.closeSync();

      store = await createStore({ dataDir: dir });
      expect(await countSpans(store)).toBe(10);
      await store.writer.write(spanRows(5, 100 + k), []);
      await store.writer.checkpoint();
      expect(await countSpans(store)).toBe(15);
    });
  }
});
