import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type SpanRow, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueueFullError, WriterClosedError } from './batch-writer.ts';
import { type Store, createStore } from './create-store.ts';
import { MOVE_SLICE_ROWS, STAGE_FILE } from './ingest-stage.ts';
import { measureAppendRate } from './measure-append-rate.ts';

const classifier = createHopClassifier();
let seed = 0;
function spanRows(count: number): SpanRow[] {
  return normalizeTraceRequest(
    syntheticTraceRequest({ spans: count, seed: ++seed, startNs: 1_760_000_000_000_000_000n }),
    { classifier, aliases: {} },
  ).rows.slice(0, count);
}

async function countSpans(store: Store): Promise<number> {
  const [row] = await store.query<{ n: number }>('SELECT count(*) AS n FROM span_store');
  return row!.n;
}

let dir: string;
let store: Store | null = null;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'governor-writer-'));
});
afterEach(async () => {
  await store?.close();
  store = null;
  rmSync(dir, { recursive: true, force: true });
});

describe('batch writer', () => {
  it('acknowledges a write only once its rows are committed and readable', async () => {
    store = await createStore({ dataDir: dir });
    const rows = spanRows(40);
    for (let i = 0; i < 5; i++) {
      await store.writer.write(rows.slice(i * 8, i * 8 + 8), []);
      expect(await countSpans(store)).toBe((i + 1) * 8);
    }
  });

  it('commits concurrent writes together (group commit)', async () => {
    store = await createStore({ dataDir: dir });
    const rows = spanRows(400);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => store!.writer.write(rows.slice(i * 8, i * 8 + 8), [])),
    );
    expect(await countSpans(store)).toBe(400);
    expect(store.writer.stats().flushes).toBeLessThan(50);
  });

  it('refuses writes past maxQueuedRows at once with a retry hint, and stores every accepted row', async () => {
    store = await createStore({ dataDir: dir, maxQueuedRows: 100 });
    const rows = spanRows(300);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => store!.writer.write(rows.slice(i * 10, i * 10 + 10), [])),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    const accepted = results.filter((r) => r.status === 'fulfilled');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      const error = (r as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(QueueFullError);
      expect((error as QueueFullError).retryAfterS).toBeGreaterThanOrEqual(1);
    }
    expect(await countSpans(store)).toBe(accepted.length * 10);
    expect(store.writer.stats().rejectedQueueFull).toBe(refused.length);
  });

  it('rejects the writers of a failed group and keeps serving the next ones', async () => {
    store = await createStore({ dataDir: dir });
    const [good, fine, bad] = spanRows(3) as [SpanRow, SpanRow, SpanRow];
    // span_store.trace_id is NOT NULL: DuckDB refuses the group.
    const broken = { ...bad, traceId: null as unknown as string };
    // The valid row ahead of the broken one in the same group is not committed either.
    await expect(store.writer.write([fine, broken], [])).rejects.toThrow(/writing to DuckDB failed/);
    await store.writer.write([good], []);
    expect(await store.query('SELECT span_id FROM span_store')).toEqual([{ span_id: good.spanId }]);
    expect(store.writer.stats().failedFlushes).toBe(1);
  });

  it('refuses a row with a value its column cannot hold, naming it, before anything is queued', async () => {
    store = await createStore({ dataDir: dir });
    const [good, bad] = spanRows(2) as [SpanRow, SpanRow];
    const broken = { ...bad, priority: 'high' as unknown as number };
    await expect(store.writer.write([good, broken], [])).rejects.toThrow(/row 2: priority is "high"/);
    await expect(store.writer.write([{ ...bad, kind: 300 }], [])).rejects.toThrow(/kind is 300/);
    expect(store.writer.stats().queuedRows).toBe(0);
    await store.writer.write([good], []);
    expect(await store.query('SELECT span_id FROM span_store')).toEqual([{ span_id: good.spanId }]);
  });

  it('keeps acknowledging writes while the main database checkpoints, then moves them into span_store', async () => {
    store = await createStore({ dataDir: dir, checkpointIntervalMs: 3_600_000 });
    const rows = spanRows(2_000);
    for (let i = 0; i < 30; i++) await store.writer.write(rows, []);
    let stop = false;
    let ackedWhileStaged = 0;
    let written = 30 * rows.length;
    const load = (async () => {
      while (!stop) {
        await store!.writer.write(rows.slice(0, 500), []);
        written += 500;
        if (store!.writer.stats().stagedRows > 0) ackedWhileStaged++;
      }
    })();
    await store.writer.checkpoint();
    stop = true;
    await load;
    expect(ackedWhileStaged).toBeGreaterThan(0);
    expect(store.writer.stats().checkpoints).toBe(1);
    await store.writer.checkpoint();
    expect(await countSpans(store)).toBe(written);
    const [staged] = await store.query<{ n: number }>('SELECT count(*) AS n FROM stage.main.span_store');
    expect(staged!.n).toBe(0);
  });

  it('copies staged rows into span_store while writes still go to the stage, each row read once', async () => {
    store = await createStore({ dataDir: dir, checkpointIntervalMs: 3_600_000 });
    const rows = spanRows(2_000);
    for (let i = 0; i < 20; i++) await store.writer.write(rows, []);
    let written = 20 * rows.length;
    let stop = false;
    let copiedWhileStaging = 0;
    const miscounts: string[] = [];
    let before = { main: written, staged: 0 };
    const load = (async () => {
      while (!stop) {
        await store!.writer.write(rows.slice(0, 500), []);
        written += 500;
        const [seen] = await store!.query<{ main: number; staged: number; all: number }>(
          `SELECT (SELECT count(*) FROM span_store) AS main, (SELECT count(*) FROM stage.main.span_store) AS staged,
             (SELECT count(*) FROM spans) AS "all"`,
        );
        // One client: after its ack and before its next write, nothing else is in flight.
        if (seen!.all !== written) miscounts.push(`${seen!.all} read of ${written} acknowledged`);
        // This ack's rows went to the stage, and span_store grew meanwhile: the stage was copied.
        if (seen!.staged === before.staged + 500 && seen!.main > before.main) copiedWhileStaging++;
        before = seen!;
      }
    })();
    await store.writer.checkpoint();
    stop = true;
    await load;
    expect(miscounts).toEqual([]);
    expect(copiedWhileStaging).toBeGreaterThan(0);
    expect(await countSpans(store)).toBe(written);
  });

  it('close() commits what is queued and checkpoints; the data is there after reopening', async () => {
    store = await createStore({ dataDir: dir });
    const rows = spanRows(100);
    const pending = Array.from({ length: 10 }, (_, i) =>
      store!.writer.write(rows.slice(i * 10, i * 10 + 10), []),
    );
    await store.close();
    await Promise.all(pending);
    await expect(store.writer.write(rows.slice(0, 1), [])).rejects.toBeInstanceOf(WriterClosedError);
    store = await createStore({ dataDir: dir });
    expect(await countSpans(store)).toBe(100);
  });
});

describe('ingest stage recovery', () => {
  async function leaveStagedRows(alreadyMoved: boolean): Promise<void> {
    store = await createStore({ dataDir: dir });
    await store.writer.write(spanRows(10), []);
    await store.close();
    store = null;
    // What a crash in the middle of a checkpoint cycle leaves behind.
    const instance = await DuckDBInstance.create(join(dir, 'governor.duckdb'));
    const c = await instance.connect();
    await c.run(`ATTACH '${join(dir, STAGE_FILE)}' AS stage`);
    await c.run('INSERT INTO stage.main.span_store SELECT * FROM span_store LIMIT 4');
    await c.run('INSERT INTO stage.main.ingest_stage_epoch VALUES (77)');
    if (alreadyMoved) {
      await c.run('INSERT INTO span_store SELECT * FROM stage.main.span_store');
      await c.run('INSERT INTO ingest_stage_moves (epoch) VALUES (77)');
    }
    c.closeSync();
    instance.closeSync();
  }

  it('moves rows a crash left in the stage into span_store at start', async () => {
    await leaveStagedRows(false);
    store = await createStore({ dataDir: dir });
    expect(await countSpans(store)).toBe(14);
  });

  it('does not copy them twice when the crash came after the copy', async () => {
    await leaveStagedRows(true);
    store = await createStore({ dataDir: dir });
    expect(await countSpans(store)).toBe(14);
    const [staged] = await store.query<{ n: number }>('SELECT count(*) AS n FROM stage.main.span_store');
    expect(staged!.n).toBe(0);
  });
});

describe('a move interrupted part way', () => {
  it('resumes after its last recorded slice, copies no row twice, and reads each row once meanwhile', async () => {
    const staged = MOVE_SLICE_ROWS * 2 + 1_000;
    store = await createStore({ dataDir: dir });
    await store.writer.write(spanRows(staged), []);
    await store.close();
    store = null;
    // A crash after the first slice of a move: the stage holds every row, the main table the first
    // slice of them too, recorded in the slice's own transaction.
    const instance = await DuckDBInstance.create(join(dir, 'governor.duckdb'));
    const c = await instance.connect();
    await c.run(`ATTACH '${join(dir, STAGE_FILE)}' AS stage`);
    await c.run('INSERT INTO stage.main.span_store SELECT * FROM span_store');
    await c.run('INSERT INTO stage.main.ingest_stage_epoch VALUES (77)');
    await c.run('BEGIN TRANSACTION');
    await c.run(
      `INSERT INTO span_store BY NAME SELECT * FROM stage.main.span_store WHERE rowid < ${MOVE_SLICE_ROWS}`,
    );
    await c.run(
      `INSERT INTO ingest_stage_moves (epoch, table_name, through_rowid) VALUES (77, 'span_store', ${MOVE_SLICE_ROWS - 1})`,
    );
    await c.run('COMMIT');
    const view = await c.runAndReadAll('SELECT count(*)::INTEGER FROM spans');
    expect(view.getRowsJS()[0]![0]).toBe(staged * 2);
    c.closeSync();
    instance.closeSync();

    store = await createStore({ dataDir: dir });
    expect(await countSpans(store)).toBe(staged * 2);
    const [left] = await store.query<{ n: number }>(
      'SELECT count(*)::INTEGER AS n FROM stage.main.span_store',
    );
    expect(left!.n).toBe(0);
    const [viewed] = await store.query<{ n: number }>('SELECT count(*)::INTEGER AS n FROM spans');
    expect(viewed!.n).toBe(staged * 2);
    // Done, the epoch keeps one record (its slices' are dropped): the table the views read stays small.
    const [records] = await store.query<{ n: number }>(
      'SELECT count(*)::INTEGER AS n FROM ingest_stage_moves WHERE epoch = 77',
    );
    expect(records!.n).toBe(1);
  });
});

describe('measureAppendRate', () => {
  it('appends the requested rows into a throwaway database, a row or a DataChunk at a time', async () => {
    for (const method of ['row', 'chunk'] as const) {
      // 4,100 rows: two full DataChunks and a partial one, flushes in between.
      const rate = await measureAppendRate({
        dir: join(dir, `raw-${method}`),
        rows: spanRows(50),
        count: 4_100,
        flushEvery: 1_000,
        method,
      });
      expect({ method, rows: rate.rows }).toEqual({ method, rows: 4_100 });
      expect(rate.rowsPerS).toBeGreaterThan(0);
    }
  });
});
