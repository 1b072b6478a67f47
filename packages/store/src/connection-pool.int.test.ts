import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ConnectionPool,
  ReadDeadlineError,
  ReadersBusyError,
  createConnectionPool,
} from './connection-pool.ts';
import { withReadDeadline } from './read-deadline-scope.ts';

// A read past its deadline is interrupted inside DuckDB and frees its connection; callers past the
// queue bound are refused at once instead of piling up behind a heavy read.

/** Runs for minutes unless interrupted (a cross join counted row by row). */
const ENDLESS_SQL = 'SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range + b.range = -1';

let instance: DuckDBInstance;
let pool: ConnectionPool | null = null;
afterEach(() => {
  pool?.closeAll();
  pool = null;
  instance.closeSync();
});

const run = (p: ConnectionPool, sql: string, deadlineMs?: number) =>
  p.use(
    async (c) => (await c.runAndReadAll(sql)).getRowsJS(),
    deadlineMs === undefined ? undefined : { deadlineMs },
  );

describe('connection pool', () => {
  it('interrupts a read at its deadline and serves the next read on the same connection', async () => {
    instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    pool = await createConnectionPool(instance, 1, { deadlineMs: 300 });
    const started = performance.now();
    const error = await run(pool, ENDLESS_SQL).catch((e: unknown) => e);
    const elapsedMs = performance.now() - started;
    expect(error).toBeInstanceOf(ReadDeadlineError);
    expect((error as ReadDeadlineError).code).toBe('GOV_ERR_READ_TIMEOUT');
    expect(elapsedMs).toBeLessThan(5_000);
    expect(await run(pool, 'SELECT 42')).toEqual([[42]]);
  });

  it('counts the wait for a connection against the deadline and refuses callers past the queue bound', async () => {
    instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    pool = await createConnectionPool(instance, 1, { maxWaiting: 2 });
    const heavy = run(pool, ENDLESS_SQL, 1_500).catch((e: unknown) => e);
    // Waits behind the heavy read and gives up at its own, shorter deadline.
    const waiting = run(pool, 'SELECT 1', 200).catch((e: unknown) => e);
    const queued = run(pool, 'SELECT 2');
    const refused = await run(pool, 'SELECT 3').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ReadersBusyError);
    expect(await waiting).toBeInstanceOf(ReadDeadlineError);
    expect(await heavy).toBeInstanceOf(ReadDeadlineError);
    // The caller still in the queue gets the connection once the heavy read is interrupted.
    expect(await queued).toEqual([[2]]);
  });

  it("gives each call of one read only what is left of that read's deadline, not a deadline of its own", async () => {
    instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    pool = await createConnectionPool(instance, 1, { deadlineMs: 60_000 });
    const p = pool;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Time already spent (waiting for the rollup, earlier queries) counts: a call after the read's
    // deadline is refused without running; one with time left is interrupted when the read's is up.
    const late = await withReadDeadline(200, async () => {
      await sleep(250);
      return run(p, 'SELECT 1');
    }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(ReadDeadlineError);
    expect((late as ReadDeadlineError).deadlineMs).toBe(200);
    const cut = await withReadDeadline(1000, async () => {
      await sleep(500);
      return run(p, ENDLESS_SQL);
    }).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(ReadDeadlineError);
    expect((cut as ReadDeadlineError).deadlineMs).toBe(1000);
    // An inner read keeps the outer one's earlier deadline; outside any read the pool's own applies.
    const nested = await withReadDeadline(200, () =>
      withReadDeadline(60_000, async () => {
        await sleep(250);
        return run(p, 'SELECT 1');
      }),
    ).catch((e: unknown) => e);
    expect((nested as ReadDeadlineError).deadlineMs).toBe(200);
    expect(await run(p, 'SELECT 42')).toEqual([[42]]);
  });
});
