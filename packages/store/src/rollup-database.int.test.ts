import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from './create-store.ts';
import { ROLLUP_FILE, attachRollupDatabase } from './rollup-database.ts';
import { runMigrations } from './run-migrations.ts';

// The request rollup lives in a database file of its own (rollup-database.ts), so that its commits
// never hold up the ingest writer's. Data dirs written before that keep their rollups: the first
// start moves them, any start after a stop part way finishes the move, and nothing is doubled.

const dirs: string[] = [];
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Columns every request_facts row must have (NOT NULL), for hand-made rows. */
const FACT = (
  i: number,
) => `SELECT 'trace-${i}' AS trace_id, ${i} AS trace_key, ${i} AS task_key, 'root' AS root_span_id,
  'POST /v1/chat/completions' AS name, true AS has_root, ${1_000 + i} AS start_ns, ${2_000 + i} AS end_ns,
  ${1_000 + i} AS first_span_ns, ${2_000 + i} AS last_span_ns, 0.001 AS e2e_ms, 'trace-${i}' AS task_id,
  'trace:trace-${i}' AS step_key, 1 AS attempt, 'success' AS outcome, false AS preempted, 3 AS span_count,
  true AS is_final_attempt, true AS is_task_last, ${1_000 + i} AS task_start_ns, ${2_000 + i} AS task_end_ns,
  1 AS task_requests, 1 AS task_steps, true AS task_complete, true AS task_finals_ok`;

/** A data dir as versions before the rollup's own file left it: rollups in governor.duckdb. */
async function olderDataDir(requests: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'governor-rollup-db-'));
  dirs.push(dir);
  const instance = await DuckDBInstance.create(join(dir, 'governor.duckdb'));
  const c = await instance.connect();
  await runMigrations(c);
  for (let i = 0; i < requests; i++) await c.run(`INSERT INTO request_facts BY NAME ${FACT(i)}`);
  await c.run('UPDATE request_facts_state SET last_rowid = 41, last_mode = $1 WHERE id = 1', ['rowid']);
  c.closeSync();
  instance.closeSync();
  return dir;
}

async function layout(s: Store) {
  return s.query<{ database_name: string; table_name: string; kind: string }>(
    `SELECT database_name, table_name, 'table' AS kind FROM duckdb_tables() WHERE table_name LIKE 'request_facts%'
     UNION ALL
     SELECT database_name, view_name, 'view' FROM duckdb_views() WHERE view_name LIKE 'request_facts%'
     ORDER BY ALL`,
  );
}

async function counts(s: Store) {
  const [row] = await s.query<{ facts: number; requests: number; last_rowid: number }>(
    `SELECT (SELECT count(*) FROM request_facts)::INTEGER AS facts,
            (SELECT count(*) FROM requests)::INTEGER AS requests,
            (SELECT last_rowid FROM request_facts_state WHERE id = 1)::INTEGER AS last_rowid`,
  );
  return row!;
}

const MOVED = [
  { database_name: 'governor', table_name: 'request_facts', kind: 'view' },
  { database_name: 'governor', table_name: 'request_facts_state', kind: 'view' },
  { database_name: 'rollup', table_name: 'request_facts', kind: 'table' },
  { database_name: 'rollup', table_name: 'request_facts_state', kind: 'table' },
];

describe('the rollup database', () => {
  it('holds the rollup tables of a new data dir, read under their old names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-rollup-db-'));
    dirs.push(dir);
    store = await createStore({ dataDir: dir });
    expect(await layout(store)).toEqual(MOVED);
    expect(existsSync(join(dir, ROLLUP_FILE))).toBe(true);
    await store.execute(`INSERT INTO rollup.main.request_facts BY NAME ${FACT(7)}`);
    expect((await counts(store)).facts).toBe(1);
    // What an operator sees on /api/storage counts the rollup's table and file too.
    const stats = await store.storageStats();
    expect(stats.tables.find((t) => t.table === 'request_facts')?.rows).toBe(1);
  });

  it("moves an older data dir's rollups into it once, losing and doubling nothing", async () => {
    const dir = await olderDataDir(25);
    store = await createStore({ dataDir: dir });
    expect(await layout(store)).toEqual(MOVED);
    expect(await counts(store)).toEqual({ facts: 25, requests: 25, last_rowid: 41 });
    await store.close();
    store = await createStore({ dataDir: dir });
    expect(await counts(store)).toEqual({ facts: 25, requests: 25, last_rowid: 41 });
  });

  it('starts after a stop between copying the rollups and replacing the main tables', async () => {
    const dir = await olderDataDir(12);
    // The first step alone, as a kill -9 or a full disk right after its commit would leave it.
    const instance = await DuckDBInstance.create(join(dir, 'governor.duckdb'));
    const c = await instance.connect();
    await c.run(`ATTACH '${join(dir, ROLLUP_FILE)}' AS rollup`);
    for (const table of ['request_facts', 'request_facts_state']) {
      const [[ddl]] = (
        await c.runAndReadAll(
          `SELECT sql FROM duckdb_tables() WHERE table_name = '${table}' AND database_name = current_database()`,
        )
      ).getRowsJS() as [[string]];
      await c.run(ddl.replace(`CREATE TABLE ${table}(`, `CREATE TABLE rollup.main.${table}(`));
      await c.run(`INSERT INTO rollup.main.${table} SELECT * FROM main.${table}`);
    }
    c.closeSync();
    instance.closeSync();

    store = await createStore({ dataDir: dir });
    expect(await layout(store)).toEqual(MOVED);
    expect(await counts(store)).toEqual({ facts: 12, requests: 12, last_rowid: 41 });
  });

  it('says what to do when the rollup file of a moved data dir is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-rollup-db-'));
    dirs.push(dir);
    store = await createStore({ dataDir: dir });
    await store.close();
    store = null;
    rmSync(join(dir, ROLLUP_FILE));
    rmSync(join(dir, `${ROLLUP_FILE}.wal`), { force: true });
    await expect(createStore({ dataDir: dir })).rejects.toThrow(/restore governor-rollup\.duckdb/);
  });

  it('sets up the same layout for an in-memory store', async () => {
    // In memory (the in-process store): the same layout, nothing on disk.
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    await runMigrations(c);
    await attachRollupDatabase(c, ':memory:');
    const rows = (
      await c.runAndReadAll("SELECT count(*) FROM duckdb_views() WHERE view_name = 'request_facts'")
    )
      .getRowsJS()
      .map((r) => Number(r[0]));
    expect(rows).toEqual([1]);
    c.closeSync();
    instance.closeSync();
  });
});
