import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type BatchWriter, createBatchWriter } from './batch-writer.ts';
import { type ConnectionPool, createConnectionPool } from './connection-pool.ts';
import { runMigrations } from './run-migrations.ts';
import { runUserQuery, type UserQueryOptions, type UserQueryResult } from './run-user-query.ts';
import { toJsValue } from './to-js-value.ts';

export interface StoreOptions {
  /** Folder holding governor.duckdb (created if missing); ':memory:' for an in-memory store. */
  dataDir: string;
  maxQueuedRows?: number;
  checkpointIntervalMs?: number;
  /** DuckDB memory_limit for the whole instance, e.g. '4GB'. */
  memoryLimit?: string;
  threads?: number;
  extraMigrationDirs?: readonly string[];
}

export type SqlParams =
  | Record<string, string | number | bigint | boolean | null>
  | (string | number | bigint | boolean | null)[];

export interface Store {
  readonly dataDir: string;
  readonly exportDir: string | null;
  readonly writer: BatchWriter;
  /** Internal read: rows as plain objects with JSON-safe values. */
  query<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  /** Internal write (recommendations, alert state…); not for user input. */
  execute(sql: string, params?: SqlParams): Promise<void>;
  /** The read-only gate for ad-hoc SQL. */
  runUserQuery(sql: string, options: UserQueryOptions): Promise<UserQueryResult>;
  close(): Promise<void>;
}

export async function createStore(options: StoreOptions): Promise<Store> {
  const inMemory = options.dataDir === ':memory:';
  const dataDir = inMemory ? ':memory:' : resolve(options.dataDir);
  const exportDir = inMemory ? null : join(dataDir, 'export');
  if (!inMemory) mkdirSync(exportDir!, { recursive: true });
  const instance = await DuckDBInstance.create(inMemory ? ':memory:' : join(dataDir, 'governor.duckdb'), {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Checkpoints are scheduled by the writer between flushes, not triggered inside one.
    checkpoint_threshold: '1GB',
    memory_limit: options.memoryLimit ?? '4GB',
    threads: String(options.threads ?? 2),
  });
  const setup = await instance.connect();
  await runMigrations(setup, options.extraMigrationDirs ?? []);
  if (exportDir) await setup.run(`SET allowed_directories=['${exportDir.replaceAll("'", "''")}']`);
  await setup.run('SET enable_external_access=false');
  await setup.run('SET lock_configuration=true');
  setup.closeSync();

  const writerConnection = await instance.connect();
  const writer = await createBatchWriter(writerConnection, {
    maxQueuedRows: options.maxQueuedRows ?? 400_000,
    checkpointIntervalMs: options.checkpointIntervalMs ?? 30_000,
  });
  const readers = await createConnectionPool(instance, 3);
  const userConnections: ConnectionPool = await createConnectionPool(instance, 2);
  const internalWriter = await createConnectionPool(instance, 1);

  return {
    dataDir,
    exportDir,
    writer,
    query: <T>(sql: string, params?: SqlParams) =>
      readers.use(async (c) => {
        const reader = await c.runAndReadAll(sql, params as never);
        return reader.getRowObjectsJS().map((row) => toJsValue(row)) as T[];
      }),
    execute: (sql, params) =>
      internalWriter.use(async (c) => {
        await c.run(sql, params as never);
      }),
    runUserQuery: (sql, queryOptions) => userConnections.use((c) => runUserQuery(c, sql, queryOptions)),
    async close() {
      await writer.close();
      readers.closeAll();
      userConnections.closeAll();
      internalWriter.closeAll();
      writerConnection.closeSync();
      instance.closeSync();
    },
  };
}
