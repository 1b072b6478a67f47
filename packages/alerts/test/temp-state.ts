import type { Store } from '@governor/store';
import pg from 'pg';
import type { AlertStateOptions } from '../src/persistence/open-alert-state.ts';
import { createTempStore } from './temp-store.ts';

// Where a test keeps alert state: a fresh DuckDB in a temp folder (one node), or a fresh schema on
// a PostgreSQL server (nodes sharing it). Suites run once per backend and assert the same.
// Exported as @governor/alerts/testing for the server's tests of state it shares with alerting.

export { type PostgresServer, startPostgres } from '@governor/store/testing';

export interface TempAlertState {
  /** What createAlertEngine takes to keep its state here. */
  readonly engineOptions: { store: Store } | { state: AlertStateOptions };
  /** The database as a node sees it; each call to `connect` is another node (PostgreSQL only). */
  connect(): pg.Pool;
  /** A restart: DuckDB reopened on the same files; PostgreSQL: a new pool on the same schema. */
  reopen(): Promise<void>;
  dispose(): Promise<void>;
}

export interface AlertStateBackend {
  name: 'DuckDB' | 'PostgreSQL';
  /** Several nodes can share it. */
  shared: boolean;
  open(): Promise<TempAlertState>;
}

let schemas = 0;

/**
 * Ends a pool once its sessions closed: pool.end() resolves before they do, and a server stopped
 * right after would kill them mid-close (an unhandled error in the test run).
 */
export async function endPool(pool: pg.Pool): Promise<void> {
  let open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on('remove', () => {
      if (--open <= 0) resolve();
    });
  });
  await pool.end();
  await closed;
}

/** The two backends; `postgresUrl` is read when a test opens one (after the server started). */
export function alertStateBackends(postgresUrl: () => string): AlertStateBackend[] {
  return [
    {
      name: 'DuckDB',
      shared: false,
      async open() {
        const temp = await createTempStore();
        return {
          get engineOptions() {
            return { store: temp.store };
          },
          connect() {
            throw new Error('an embedded store is not shared by nodes');
          },
          reopen: async () => {
            await temp.reopen();
          },
          dispose: () => temp.dispose(),
        };
      },
    },
    {
      name: 'PostgreSQL',
      shared: true,
      async open() {
        const schema = `alerts_test_${process.pid}_${++schemas}`;
        const pools: pg.Pool[] = [];
        // A schema per test: tests never see each other's rows.
        const connect = () => {
          const pool = new pg.Pool({
            connectionString: postgresUrl(),
            max: 4,
            options: `-c search_path=${schema}`,
          });
          pools.push(pool);
          return pool;
        };
        let pool = connect();
        await pool.query(`CREATE SCHEMA ${schema}`);
        return {
          get engineOptions() {
            return { state: { postgres: pool } };
          },
          connect,
          async reopen() {
            await endPool(pool);
            pool = connect();
          },
          async dispose() {
            await Promise.all(pools.filter((p) => !p.ending).map(endPool));
            // A client, not a pool: its end() waits for the server to close the session.
            const admin = new pg.Client({ connectionString: postgresUrl() });
            await admin.connect();
            await admin.query(`DROP SCHEMA ${schema} CASCADE`);
            await admin.end();
          },
        };
      },
    },
  ];
}
