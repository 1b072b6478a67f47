import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from './create-store.ts';

// The DuckDB instance gets the memory limit and threads it is given (the server passes
// server.duckdb_memory_limit / duckdb_threads), and ad-hoc SQL lives within that one limit.

let dir: string | null = null;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

async function open(options: { memoryLimit?: string; threads?: number } = {}): Promise<Store> {
  dir = mkdtempSync(join(tmpdir(), 'governor-store-'));
  store = await createStore({ dataDir: dir, ...options });
  return store;
}

async function settings(s: Store): Promise<{ memoryLimit: string; threads: number }> {
  const [row] = await s.query<{ memoryLimit: string; threads: number }>(
    "SELECT current_setting('memory_limit') AS \"memoryLimit\", current_setting('threads') AS threads",
  );
  return row!;
}

describe('createStore DuckDB settings', () => {
  it('defaults to a 1GB memory limit (DuckDB reads GB as 10^9 bytes) and 2 threads', async () => {
    expect(await settings(await open())).toEqual({ memoryLimit: '953.6 MiB', threads: 2 });
  });

  it('applies the memory limit and threads it is given', async () => {
    expect(await settings(await open({ memoryLimit: '256MiB', threads: 1 }))).toEqual({
      memoryLimit: '256.0 MiB',
      threads: 1,
    });
  });

  it('lets ad-hoc SQL spill past the limit, and names the operator setting when it cannot', async () => {
    const s = await open({ memoryLimit: '128MB', threads: 2 });
    // ~10M groups do not fit in 128 MB: the aggregate spills to governor.duckdb.tmp, external
    // access being off for users notwithstanding.
    const grouped = await s.runUserQuery(
      'SELECT count(*) AS groups FROM (SELECT i, count(*) FROM range(10000000) t(i) GROUP BY i)',
      { limit: 10, timeoutMs: 60_000 },
    );
    expect(grouped.rows).toEqual([[10_000_000]]);
    // One string bigger than the whole limit cannot spill.
    const run = s.runUserQuery("SELECT length(string_agg(repeat('x', 1000), ',')) AS n FROM range(300000)", {
      limit: 10,
      timeoutMs: 60_000,
    });
    await expect(run).rejects.toMatchObject({
      code: 'GOV_ERR_SQL_FAILED',
      message: expect.stringMatching(/memory_limit.*Out of Memory Error.*server\.duckdb_memory_limit/),
    });
    // The connection and the store are fine afterwards.
    expect((await s.runUserQuery('SELECT 1 AS one', { limit: 1, timeoutMs: 5_000 })).rows).toEqual([[1]]);
  });
});

describe('closing the store while a state write runs', () => {
  it('lets the write finish, refuses later ones, and still checkpoints', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-store-close-'));
    store = await createStore({ dataDir: dir });
    // A write of the control loop's or the alerts' kind, long enough to be running at the close.
    const write = store.execute('CREATE TABLE close_probe AS SELECT range AS i FROM range(60000000)');
    await new Promise((r) => setTimeout(r, 200));
    const closing = store.close();
    await expect(store.execute('SELECT 1')).rejects.toThrow(/shutting down/);
    // Before, the final CHECKPOINT ran beside it and failed: "there are other write transactions active".
    await closing;
    await write;
    store = null;
    store = await createStore({ dataDir: dir });
    const [row] = await store.query<{ n: number }>('SELECT count(*)::INTEGER AS n FROM close_probe');
    expect(row?.n).toBe(60_000_000);
  }, 120_000);
});
