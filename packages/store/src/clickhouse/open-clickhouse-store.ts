import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { ClickHouseStoreConfig } from '@governor/conventions';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanRow,
  readColumnBatch,
} from '@governor/otlp';
import { type ColumnRows, QueueFullError, WriterClosedError, emptyWriterStats } from '../batch-writer.ts';
import { observeMs } from '../duration-histogram.ts';
import { type IngestCpu, createIngestCpu } from '../ingest-cpu/ingest-cpu.ts';
import type { RetentionPolicy, RetentionReport } from '../retention/run-retention.ts';
import type { StorageStats } from '../retention/collect-storage-stats.ts';
import type { UserQueryOptions, UserQueryResult } from '../run-user-query.ts';
import type { TelemetryStore } from '../telemetry-store.ts';
import { type ClickHouseReader, createClickHouseReader } from './clickhouse-reader.ts';
import { type ClickHouseRollupIo, createClickHouseRollupIo } from './clickhouse-rollup-io.ts';
import {
  MINUTE_NS,
  NEWEST_EVENT,
  clickHouseSchemaStatements,
  describeDuckDbTable,
  requestFactsStatements,
} from './clickhouse-schema.ts';
import { createClickHouseWriter } from './clickhouse-writer.ts';
import { runClickHouseRetention } from './clickhouse-retention.ts';
import { collectClickHouseStorage } from './clickhouse-storage.ts';
import { runClickHouseUserQuery } from './clickhouse-user-query.ts';

// The ClickHouse engine (store.engine: clickhouse) as the server sees a store: OTLP batches written
// to the cluster and acknowledged once every shard holds them, internal reads (ClickHouseReader),
// ad-hoc SQL through a read-only user, retention by day partition, disk usage from system.parts.
// State that must be transactional lives in PostgreSQL (the control and alert packages).

export interface ClickHouseStore extends TelemetryStore {
  readonly engine: 'clickhouse';
  readonly reader: ClickHouseReader;
  /** Read-back and write of request facts for this node's rollup (roll-up-on-clickhouse.ts). */
  readonly rollupIo: ClickHouseRollupIo;
  /** Called with the spans of every batch ClickHouse acknowledged (the node's rollup loop takes them). */
  onSpansAcknowledged(listener: (spans: readonly SpanRow[]) => void): void;
}

export interface ClickHouseStoreOptions {
  config: ClickHouseStoreConfig;
  /** Source of user_env / password_env and the read-only user's variables. */
  env: NodeJS.ProcessEnv;
  readDeadlineMs: number;
  /** Rows written but not yet acknowledged by ClickHouse, at most; more are refused (503, retry). */
  maxQueuedRows: number;
}

/** INSERTs under way at once per node; more writes wait to share the next one. */
const MAX_INSERTS = 2;

export class ClickHouseConfigError extends Error {
  override readonly name = 'ClickHouseConfigError';
}

export async function openClickHouseStore(options: ClickHouseStoreOptions): Promise<ClickHouseStore> {
  const { config, env } = options;
  const credentials = (userEnv?: string, passwordEnv?: string) => {
    const username = userEnv ? env[userEnv] : 'default';
    if (userEnv && !username)
      throw new ClickHouseConfigError(
        `store.clickhouse: the environment variable ${userEnv} (the user) is not set`,
      );
    return { username: username ?? 'default', password: passwordEnv ? (env[passwordEnv] ?? '') : '' };
  };
  const connect = (
    url: string,
    user = credentials(config.user_env, config.password_env),
    database?: string,
  ) =>
    createClient({
      url,
      ...user,
      ...(database ? { database } : {}),
      log: { level: ClickHouseLogLevel.OFF },
      request_timeout: 60_000,
    });
  const client = connect(config.url);
  const shardUrls = config.shard_urls ?? [config.url];
  const shardClients = shardUrls.map((url) => (url === config.url ? client : connect(url)));
  const readonlyClient = config.readonly_user_env
    ? connect(
        config.url,
        credentials(config.readonly_user_env, config.readonly_password_env),
        config.database,
      )
    : null;
  const closeAll = () =>
    Promise.all(
      [...new Set([client, ...shardClients, ...(readonlyClient ? [readonlyClient] : [])])].map((c) =>
        c.close(),
      ),
    );

  const factColumns = await describeDuckDbTable('request_facts');
  try {
    await createTables(shardClients, config, factColumns);
  } catch (error) {
    await closeAll();
    throw new ClickHouseConfigError(
      `cannot create Governor's tables on ClickHouse (${shardUrls.join(', ')}): ${(error as Error).message.split('\n')[0]}; check store.clickhouse (url, shard_urls, cluster "${config.cluster}" in the servers' remote_servers) and that the servers are up`,
      { cause: error },
    );
  }

  const writer = createClickHouseWriter(client, config.database);
  const reader = createClickHouseReader(client, {
    database: config.database,
    readDeadlineMs: options.readDeadlineMs,
    factColumns,
  });
  const ingestCpu = createIngestCpu();
  const listeners: ((spans: readonly SpanRow[]) => void)[] = [];
  const stats = emptyWriterStats();
  let closed = false;
  let readsStopped = false;
  const inFlight = new Set<Promise<void>>();

  // Group commit: at most MAX_INSERTS INSERTs run at once, and the writes that arrive meanwhile
  // share the next one. Each INSERT makes a part of every column on every shard, which ClickHouse
  // then merges: one INSERT per OTLP request cost the servers more CPU than everything else
  // (bench ingest --engine clickhouse). Alone, a write goes out at once; under load, several
  // requests go out as one INSERT, each acknowledged when it has been stored.
  let next: {
    spans: SpanRow[];
    metrics: MetricPointRow[];
    waiters: { resolve(): void; reject(e: unknown): void }[];
  } | null = null;
  let running = 0;
  const startInsert = () => {
    if (next === null || running >= MAX_INSERTS) return;
    const group = next;
    next = null;
    running++;
    const rows = group.spans.length + group.metrics.length;
    const started = performance.now();
    const done = writer.write(group.spans, group.metrics);
    const tracked = done.then(
      () => {
        const ms = performance.now() - started;
        stats.flushes++;
        stats.flushMsTotal += ms;
        stats.lastFlushMs = ms;
        stats.maxFlushMs = Math.max(stats.maxFlushMs, ms);
        stats.lastFlushRows = rows;
        observeMs(stats.flushSeconds, ms);
        stats.spansWritten += group.spans.length;
        stats.metricPointsWritten += group.metrics.length;
        // The rollup takes the spans before any of their exports is acknowledged.
        if (group.spans.length > 0) for (const listener of listeners) listener(group.spans);
        for (const w of group.waiters) w.resolve();
      },
      (error: unknown) => {
        stats.failedFlushes++;
        // Every write of the group is refused: its exporter retries (a row stored twice is one).
        for (const w of group.waiters) w.reject(error);
      },
    );
    inFlight.add(tracked);
    void tracked.finally(() => {
      inFlight.delete(tracked);
      running--;
      stats.queuedRows -= rows;
      startInsert();
    });
  };
  const write = (spans: readonly SpanRow[], metrics: readonly MetricPointRow[]): Promise<void> => {
    if (closed) return Promise.reject(new WriterClosedError());
    const rows = spans.length + metrics.length;
    if (rows === 0) return Promise.resolve();
    if (stats.queuedRows > 0 && stats.queuedRows + rows > options.maxQueuedRows) {
      stats.rejectedQueueFull++;
      return Promise.reject(new QueueFullError(stats.queuedRows, 1));
    }
    stats.queuedRows += rows;
    next ??= { spans: [], metrics: [], waiters: [] };
    for (const r of spans) next.spans.push(r);
    for (const r of metrics) next.metrics.push(r);
    const group = next;
    const acknowledged = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
    startInsert();
    return acknowledged;
  };

  const checkReads = () => {
    if (readsStopped)
      throw new Error('Governor is shutting down: the read was cancelled; retry against another node');
  };

  return {
    engine: 'clickhouse',
    exportDir: null,
    readDeadlineMs: options.readDeadlineMs,
    reader,
    rollupIo: createClickHouseRollupIo(client, config.database, factColumns),
    ingestCpu,
    writer: {
      write,
      writeColumns: (batch: ColumnRows) =>
        write(
          batch.spans.flatMap((b) => readColumnBatch(b, SPAN_COLUMNS) as unknown as SpanRow[]),
          batch.metrics.flatMap(
            (b) => readColumnBatch(b, METRIC_POINT_COLUMNS) as unknown as MetricPointRow[],
          ),
        ),
      stats: () => ({ ...stats }),
    },
    onSpansAcknowledged(listener) {
      listeners.push(listener);
    },
    async ping() {
      checkReads();
      await reader.query('SELECT 1 AS ok');
    },
    runUserQuery(sql: string, queryOptions: UserQueryOptions): Promise<UserQueryResult> {
      checkReads();
      return runClickHouseUserQuery(readonlyClient, config.database, sql, queryOptions);
    },
    runRetention: (policy: RetentionPolicy): Promise<RetentionReport> =>
      runClickHouseRetention(shardClients, config.database, policy),
    storageStats: (): Promise<StorageStats> => collectClickHouseStorage(shardClients, config.database),
    stopReads() {
      readsStopped = true;
    },
    async close() {
      if (closed) return;
      closed = true;
      // Writes already accepted are stored (or refused) before the connections close.
      while (inFlight.size > 0 || next !== null) {
        startInsert();
        await Promise.all(inFlight);
      }
      await closeAll();
    },
  };
}

async function createTables(
  clients: readonly ClickHouseClient[],
  config: ClickHouseStoreConfig,
  factColumns: Awaited<ReturnType<typeof describeDuckDbTable>>,
): Promise<void> {
  const schema = { database: config.database, cluster: config.cluster };
  for (const c of clients)
    for (const statement of [
      ...clickHouseSchemaStatements(schema),
      ...requestFactsStatements(schema, factColumns),
    ])
      await c.command({ query: statement });
  // A database whose request_facts predates request_extent: its extent, computed once from the
  // facts (a node writing facts meanwhile writes its own extent too; reads take the maximum).
  const db = config.database;
  const count = async (table: string) => {
    const result = await clients[0]!.query({
      query: `SELECT count() AS n FROM ${db}.${table}`,
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ n: string }>())[0]?.n ?? 0);
  };
  // Likewise the newest events, for tables that predate their views: per shard, from its own rows.
  for (const { table, source, column } of NEWEST_EVENT)
    if ((await count(table)) === 0 && (await count(source)) > 0)
      for (const c of clients)
        await c.command({
          query: `INSERT INTO ${db}.${table}_local SELECT toUInt8(0), max(${column}) FROM ${db}.${source}_local HAVING count() > 0`,
        });
  if ((await count('request_extent')) === 0 && (await count('request_facts')) > 0)
    await clients[0]!.command({
      query: `INSERT INTO ${db}.request_extent
        SELECT intDiv(start_ns, ${MINUTE_NS}) * ${MINUTE_NS} AS minute_ns,
               max(greatest(ifNull(end_ns, start_ns) - start_ns, 0)) AS max_duration_ns
        FROM ${db}.request_facts GROUP BY minute_ns`,
      clickhouse_settings: { insert_distributed_sync: 1 },
    });
}
