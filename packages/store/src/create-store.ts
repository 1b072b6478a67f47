import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_DUCKDB_MEMORY_LIMIT } from '@governor/conventions';
import { type BatchWriter, createBatchWriter } from './batch-writer.ts';
import { type ConnectionPool, createConnectionPool } from './connection-pool.ts';
import { type IngestCpu, createIngestCpu } from './ingest-cpu/ingest-cpu.ts';
import { STAGE_CATALOG, STAGE_FILE, attachIngestStage } from './ingest-stage.ts';
import { ROLLUP_CATALOG, ROLLUP_FILE, attachRollupDatabase } from './rollup-database.ts';
import { BACKGROUND_NICE, lowerBackgroundThreadPriority } from './lower-background-priority.ts';
import { type StorageStats, collectStorageStats } from './retention/collect-storage-stats.ts';
import { refreshHistoryViews } from './retention/refresh-history-views.ts';
import {
  type RetentionPolicy,
  type RetentionReport,
  recoverStagedExports,
  runRetention,
} from './retention/run-retention.ts';
import { runMigrations } from './run-migrations.ts';
import { runPrepared } from './prepared-statements.ts';
import { runUserQuery, type UserQueryOptions, type UserQueryResult } from './run-user-query.ts';
import { MAIN_FILE } from './store-files.ts';
import { toJsValue } from './to-js-value.ts';
import type { TelemetryStore } from './telemetry-store.ts';

export interface StoreOptions {
  /** Folder holding governor.duckdb (created if missing); ':memory:' for an in-memory store. */
  dataDir: string;
  maxQueuedRows?: number;
  checkpointIntervalMs?: number;
  /** Checkpoint after this many rows even before the interval (default 100,000). */
  checkpointRows?: number;
  /**
   * DuckDB memory_limit for the whole instance, e.g. '1GB' (10^9 bytes) or '512MiB'; default that of
   * `server.duckdb_memory_limit` (1GB).
   */
  memoryLimit?: string;
  /** DuckDB worker threads for the whole instance; default 2. */
  threads?: number;
  /**
   * Whether checkpoints merge row groups with deleted rows (DuckDB's max_vacuum_tasks); default
   * false: row groups whose rows were all deleted are still dropped (`server.duckdb_vacuum`).
   */
  vacuum?: boolean;
  /**
   * Deadline of an internal read (`query`), waiting for a reader included; past it the query is
   * interrupted and fails with ReadDeadlineError. Default 30,000 ms.
   */
  readDeadlineMs?: number;
  /** Reads allowed to wait for one of the readers; more fail at once with ReadersBusyError. Default 64. */
  maxWaitingReads?: number;
  extraMigrationDirs?: readonly string[];
  /**
   * Linux nice value for the process's other threads (DuckDB's, libuv's, V8's helpers), set when the
   * store opens, so the thread that appends and commits — the acknowledgements — gets the CPU first
   * (lower-background-priority.ts). Default 10; null leaves priorities alone.
   */
  backgroundNice?: number | null;
}

/** Connections for internal reads (signals, traces, control, alerts): reads run at most this many at once. */
const READERS = 3;
const USER_CONNECTIONS = 2;
/**
 * Connections the store keeps open: writer and its maintenance, readers, user SQL, internal
 * writes, rollup, retention. Each statement holds a libuv pool thread until it returns, so the
 * pool needs at least this many threads plus some for gunzip and fs, or the writer's next
 * statement queues behind long reads (apps/server/threadpool-preload.cjs).
 */
export const STORE_CONNECTIONS = 2 + READERS + USER_CONNECTIONS + 3;
export const DEFAULT_READ_DEADLINE_MS = 30_000;
const DEFAULT_MAX_WAITING_READS = 64;

export type SqlParams =
  | Record<string, string | number | bigint | boolean | null>
  | (string | number | bigint | boolean | null)[];

export interface Store extends TelemetryStore {
  /** The embedded engine (ClickHouseReader is the other: packages/store/src/clickhouse). */
  readonly engine: 'duckdb';
  readonly dataDir: string;
  readonly exportDir: string | null;
  readonly writer: BatchWriter;
  /** CPU per ingest stage: the writer charges append, commit and checkpoint; the server the rest. */
  readonly ingestCpu: IngestCpu;
  /** SELECT 1 on a reader (readiness). */
  ping(): Promise<void>;
  /** Internal read: rows as plain objects with JSON-safe values. */
  query<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  /** Internal write (recommendations, alert state…); not for user input. */
  execute(sql: string, params?: SqlParams): Promise<void>;
  /** Deadline of an internal read (`query`), waiting included; reads built on the rollups keep to it too. */
  readonly readDeadlineMs: number;
  /**
   * Rollup maintenance (the signals' request_facts refresh): a connection of its own, without the
   * read deadline. The refresh's plans read span_store like any read, but on the readers they
   * queued behind heavy reads (three queries each) and so held up every read waiting for the
   * rollups; and a refresh cut off by a read deadline would leave the rollups further behind.
   */
  readonly rollup: {
    query<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
    execute(sql: string, params?: SqlParams): Promise<void>;
    /**
     * For shutdown: cancels the refresh statement running now and refuses later ones, so a refresh
     * far behind does not hold up the exit (rolled back; the next start catches up). close() does
     * it too.
     */
    stop(): void;
    /** Aborted by stop(): whoever waits for the rollups stops waiting. */
    readonly stopSignal: AbortSignal;
  };
  /** The read-only gate for ad-hoc SQL. */
  runUserQuery(sql: string, options: UserQueryOptions): Promise<UserQueryResult>;
  /** Exports rows past their TTL to Parquet under exportDir and deletes them (one run at a time). */
  runRetention(policy: RetentionPolicy): Promise<RetentionReport>;
  /** Disk usage per table, of the export folder, and the last retention runs. */
  storageStats(): Promise<StorageStats>;
  /**
   * Shutdown: interrupts the reads in progress (signals, traces, ad-hoc SQL), which fail with
   * ShuttingDownError, and refuses new ones the same way. Writes and the final close are unaffected.
   */
  stopReads(): void;
  close(): Promise<void>;
}

/** Governor is stopping: reads in progress were interrupted and new ones are refused. */
export class ShuttingDownError extends Error {
  override readonly name = 'ShuttingDownError';
  readonly code = 'GOV_ERR_SHUTTING_DOWN';
  readonly retryAfterS = 5;
  constructor(
    message = 'Governor is shutting down: the read was cancelled; retry against the restarted instance',
  ) {
    super(message);
  }
}

/** The store is closing: the rollup refresh no longer runs (the next start catches up). */
export class RollupStoppedError extends Error {
  override readonly name = 'RollupStoppedError';
  constructor() {
    super('Governor is shutting down: the rollup refresh was stopped; the next start catches up');
  }
}

/** The data directory cannot be used as given; the message is one line saying what to do. */
export class DataDirError extends Error {
  override readonly name = 'DataDirError';
}

function prepareDataDir(dataDir: string, exportDir: string): void {
  const kind = statSync(dataDir, { throwIfNoEntry: false });
  if (kind && !kind.isDirectory()) {
    throw new DataDirError(
      `data directory ${dataDir} is a file, not a folder: pass --data-dir (or server.data_dir) a folder; it is created if missing`,
    );
  }
  try {
    mkdirSync(exportDir, { recursive: true });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new DataDirError(
      `cannot create ${exportDir} (${e.code ?? e.message}): give Governor a data directory it can write to`,
      { cause: error },
    );
  }
}

export async function createStore(options: StoreOptions): Promise<Store> {
  const inMemory = options.dataDir === ':memory:';
  const dataDir = inMemory ? ':memory:' : resolve(options.dataDir);
  const exportDir = inMemory ? null : join(dataDir, 'export');
  if (!inMemory) prepareDataDir(dataDir, exportDir!);
  const instance = await DuckDBInstance.create(inMemory ? ':memory:' : join(dataDir, MAIN_FILE), {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // The writer schedules checkpoints itself (by time and rows) with commits going to the ingest
    // stage meanwhile; an automatic one would run inside a flush and block the event loop.
    checkpoint_threshold: '16GB',
    // DuckDB's own jemalloc returns freed pages to the OS on a background thread instead of in the
    // thread that freed them: the writer's synchronous commits on Node's thread spent part of their
    // time in madvise, TLB flushes and page faults (perf, soak at 13,400 spans/s). Soaks with heavy
    // reads, one run each: main thread 430–520 ms/s of CPU with it vs 490–620 without, ack p99 175 ms
    // vs 140–214 at 13,400 spans/s and 78 vs 116 ms at 11,000; RSS the same.
    allocator_background_threads: 'true',
    memory_limit: options.memoryLimit ?? DEFAULT_DUCKDB_MEMORY_LIMIT,
    threads: String(options.threads ?? 2),
    // Vacuum rewrites row groups that have deletes, inside the checkpoint the request rollup waits
    // for: under retention it doubled the checkpoints' time
    // (packages/signals/bench/bench-checkpoint-vacuum.ts).
    max_vacuum_tasks: options.vacuum ? '100' : '0',
  });
  const setup = await instance.connect();
  await runMigrations(setup, options.extraMigrationDirs ?? []);
  await attachIngestStage(setup, inMemory ? ':memory:' : join(dataDir, STAGE_FILE));
  await attachRollupDatabase(setup, inMemory ? ':memory:' : join(dataDir, ROLLUP_FILE));
  const mainCatalog = String((await setup.runAndReadAll('SELECT current_database()')).getRowsJS()[0]?.[0]);
  if (exportDir) await recoverStagedExports(setup, exportDir);
  await refreshHistoryViews(setup, exportDir);
  // No catalog change of the start may wait in a WAL: DuckDB 1.5.6 cannot replay an ALTER TABLE ADD
  // COLUMN on a table with a function default (binding it asks for a default database that replay
  // has not set), so a fresh data dir killed before its first checkpoint never started again.
  for (const catalog of [mainCatalog, STAGE_CATALOG, ROLLUP_CATALOG]) {
    await setup.run(`CHECKPOINT "${catalog.replaceAll('"', '""')}"`);
  }
  // The history views read Parquet footers on every query; cache them (files are never rewritten).
  await setup.run('SET parquet_metadata_cache=true');
  if (exportDir) await setup.run(`SET allowed_directories=['${exportDir.replaceAll("'", "''")}']`);
  await setup.run('SET enable_external_access=false');
  await setup.run('SET lock_configuration=true');
  setup.closeSync();

  const writerConnection = await instance.connect();
  const writerMaintenance = await instance.connect();
  const ingestCpu = createIngestCpu();
  const writer = await createBatchWriter(writerConnection, writerMaintenance, {
    mainCatalog,
    cpu: ingestCpu,
    checkpointRows: options.checkpointRows,
    maxQueuedRows: options.maxQueuedRows ?? 400_000,
    checkpointIntervalMs: options.checkpointIntervalMs ?? 30_000,
  });
  const readDeadlineMs = options.readDeadlineMs ?? DEFAULT_READ_DEADLINE_MS;
  let rollupStopped = false;
  const rollupStop = new AbortController();
  const stopRollup = () => {
    rollupStopped = true;
    rollupConnection.interruptAll();
    rollupStop.abort();
  };
  const readers = await createConnectionPool(instance, READERS, {
    deadlineMs: readDeadlineMs,
    maxWaiting: options.maxWaitingReads ?? DEFAULT_MAX_WAITING_READS,
  });
  const userConnections: ConnectionPool = await createConnectionPool(instance, USER_CONNECTIONS);
  const internalWriter = await createConnectionPool(instance, 1);
  const rollupConnection = await createConnectionPool(instance, 1);
  // Retention holds a transaction for the length of an export; it gets a connection of its own.
  const maintenance = await createConnectionPool(instance, 1);
  // DuckDB's threads and libuv's pool exist by now; the decode workers start later and keep theirs.
  const backgroundNice = options.backgroundNice === undefined ? BACKGROUND_NICE : options.backgroundNice;
  if (backgroundNice !== null) lowerBackgroundThreadPriority(backgroundNice);

  const queryOn =
    (pool: ConnectionPool, prepared = false) =>
    <T>(sql: string, params?: SqlParams) =>
      pool.use(async (c) => {
        const reader = prepared
          ? await runPrepared(c, sql, params)
          : await c.runAndReadAll(sql, params as never);
        return reader.getRowObjectsJS().map((row) => toJsValue(row)) as T[];
      });
  const executeOn = (pool: ConnectionPool) => (sql: string, params?: SqlParams) =>
    pool.use(async (c) => {
      await c.run(sql, params as never);
    });

  const stopReads = () => {
    const reason = new ShuttingDownError();
    readers.close(reason);
    userConnections.close(reason);
  };
  const query = queryOn(readers, true);
  return {
    engine: 'duckdb',
    dataDir,
    async ping() {
      await query('SELECT 1');
    },
    exportDir,
    writer,
    ingestCpu,
    readDeadlineMs,
    // Reads repeat the same statements (runPrepared); the rollup's carry their keys as literals.
    query,
    execute: executeOn(internalWriter),
    rollup: {
      query: <T>(sql: string, params?: SqlParams) =>
        rollupStopped ? Promise.reject(new RollupStoppedError()) : queryOn(rollupConnection)<T>(sql, params),
      execute: (sql, params) =>
        rollupStopped ? Promise.reject(new RollupStoppedError()) : executeOn(rollupConnection)(sql, params),
      stop: stopRollup,
      stopSignal: rollupStop.signal,
    },
    runUserQuery: (sql, queryOptions) => userConnections.use((c) => runUserQuery(c, sql, queryOptions)),
    runRetention: (policy) =>
      maintenance.use((c) => {
        if (!exportDir)
          throw new Error('retention needs a data directory; an in-memory store has no export folder');
        return runRetention(c, exportDir, policy);
      }),
    storageStats: () => maintenance.use((c) => collectStorageStats(c, dataDir, exportDir)),
    stopReads,
    async close() {
      stopRollup();
      // A read still running now would block closing its connection until it ends.
      stopReads();
      // A refresh cancelled mid-script leaves its transaction open (its own ROLLBACK is refused
      // once stopped), and the final checkpoint fails while a write transaction is open. A ROLLBACK
      // can itself be cancelled by the interrupt that stopped the refresh (a soak's stop failed so:
      // "Cannot CHECKPOINT: there are other write transactions active"), so the connection is
      // closed too — once idle, which rolls back whatever it still holds.
      await rollupConnection
        .use(async (c) => {
          await c.run('ROLLBACK').catch(() => undefined);
        })
        .catch(() => undefined);
      rollupConnection.closeAll();
      // The final checkpoint fails while any write transaction is open ("Cannot CHECKPOINT: there
      // are other write transactions active", seen at the end of a soak): the control loop's and the
      // alerts' state writes and retention finish what they are doing and take no more.
      const closing = new ShuttingDownError('Governor is shutting down: the store takes no more writes');
      await Promise.all([internalWriter.drain(closing), maintenance.drain(closing)]);
      await writer.close();
      // The writer checkpointed the main database; the rollup's rows since its last checkpoint are
      // in its own WAL, replayed at the next start if this fails.
      await writerMaintenance.run(`CHECKPOINT ${ROLLUP_CATALOG}`).catch(() => undefined);
      readers.closeAll();
      userConnections.closeAll();
      internalWriter.closeAll();
      maintenance.closeAll();
      writerConnection.closeSync();
      writerMaintenance.closeSync();
      instance.closeSync();
    },
  };
}
