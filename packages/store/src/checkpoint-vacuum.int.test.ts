import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from './create-store.ts';

// server.duckdb_vacuum: off (the default), a checkpoint still drops the row groups whose rows were
// all deleted — what retention's deletes of whole time ranges leave — and keeps partly deleted ones
// as they are; on, it also merges partly deleted neighbours. A real store and DuckDB's own storage
// figures (pragma_storage_info).

const GROUP = 122_880;
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openStore(vacuum?: boolean): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'governor-vacuum-'));
  dirs.push(dir);
  const store = await createStore({
    dataDir: dir,
    ...(vacuum === undefined ? {} : { vacuum }),
    checkpointIntervalMs: 3_600_000,
    checkpointRows: Number.MAX_SAFE_INTEGER,
  });
  stores.push(store);
  return store;
}

/** Four full row groups of a probe table, deleted from as `where` says, then checkpointed. */
async function rowGroupsAfter(store: Store, where: string): Promise<{ groups: number; rows: number }> {
  await store.rollup.execute(
    `CREATE TABLE vacuum_probe AS SELECT range AS i, md5(range::VARCHAR) AS s FROM range(${4 * GROUP})`,
  );
  await store.writer.checkpoint();
  await store.rollup.execute(`DELETE FROM vacuum_probe WHERE ${where}`);
  await store.writer.checkpoint();
  const [stats] = await store.query<{ groups: bigint; rows: bigint }>(
    "SELECT (SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('vacuum_probe')) AS groups, (SELECT count(*) FROM vacuum_probe) AS rows",
  );
  return { groups: Number(stats!.groups), rows: Number(stats!.rows) };
}

describe('checkpoints and deleted rows', () => {
  it('off by default: row groups deleted whole are dropped, partly deleted ones kept', async () => {
    const store = await openStore();
    const [setting] = await store.query<{ v: unknown }>("SELECT current_setting('max_vacuum_tasks') AS v");
    expect(Number(setting!.v)).toBe(0);
    // The first two row groups and a little of the third, as a retention cutoff would.
    const after = await rowGroupsAfter(store, `i < ${2 * GROUP + 1000}`);
    expect(after).toEqual({ groups: 2, rows: 2 * GROUP - 1000 });
  }, 60_000);

  it('keeps two half-deleted row groups apart unless vacuum is on', async () => {
    const halves = `i >= ${2 * GROUP} AND i % 2 = 0`;
    const off = await rowGroupsAfter(await openStore(false), halves);
    const on = await rowGroupsAfter(await openStore(true), halves);
    expect(off).toEqual({ groups: 4, rows: 3 * GROUP });
    expect(on).toEqual({ groups: 3, rows: 3 * GROUP });
  }, 60_000);
});
