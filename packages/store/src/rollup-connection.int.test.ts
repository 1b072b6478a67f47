import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RollupStoppedError, type Store, createStore } from './create-store.ts';

// The rollup refresh's connection: not held up by heavy reads, and stopped at shutdown so a
// refresh far behind cannot hold up the exit.

let dir: string;
let store: Store | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

/** A statement that keeps DuckDB busy for minutes unless something cancels it. */
const ENDLESS = 'SELECT sum(hash(i)) FROM range(1000000000000) t(i)';

describe('the rollup connection', () => {
  it('runs while every reader is held by heavy reads', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-rollup-conn-'));
    store = await createStore({ dataDir: dir, readDeadlineMs: 5_000 });
    let readsDone = false;
    const heavy = Promise.all(
      Array.from({ length: 3 }, () => store!.query(ENDLESS).catch((e: unknown) => e)),
    ).then((errors) => {
      readsDone = true;
      return errors;
    });
    await new Promise((r) => setTimeout(r, 300));
    const [row] = await store.rollup.query<{ n: number }>('SELECT count(*)::INTEGER AS n FROM span_store');
    expect(row?.n).toBe(0);
    expect(readsDone).toBe(false);
    // The heavy reads end at their deadline.
    for (const e of await heavy) expect(e).toBeInstanceOf(Error);
  }, 60_000);

  it('cancels the statement running when stopped, and refuses later ones', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-rollup-conn-'));
    store = await createStore({ dataDir: dir });
    const running = store.rollup.query(ENDLESS).then(
      () => null,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 300));
    store.rollup.stop();
    expect(await running).toBeInstanceOf(Error);
    await expect(store.rollup.execute('SELECT 1')).rejects.toBeInstanceOf(RollupStoppedError);
  }, 60_000);

  it('closes cleanly when stopped inside a write transaction (the final checkpoint needs none open)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-rollup-conn-'));
    store = await createStore({ dataDir: dir });
    await store.rollup.execute('INSERT INTO ingest_stage_moves (epoch) VALUES (-1)');
    // As the refresh's script does: deletes and inserts in one transaction.
    await store.rollup.execute('BEGIN TRANSACTION');
    await store.rollup.execute('DELETE FROM ingest_stage_moves WHERE epoch = -1');
    store.rollup.stop();
    await store.close();
    store = null;
    // Nothing of the cancelled transaction was kept.
    store = await createStore({ dataDir: dir });
    const [row] = await store.query<{ n: number }>(
      'SELECT count(*)::INTEGER AS n FROM ingest_stage_moves WHERE epoch = -1',
    );
    expect(row?.n).toBe(1);
  }, 60_000);
});
