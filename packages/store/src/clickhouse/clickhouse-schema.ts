import { DuckDBInstance } from '@duckdb/node-api';
import { METRIC_POINT_COLUMNS, SPAN_COLUMNS, type SpanColumnType } from '@governor/otlp';
import { runMigrations } from '../run-migrations.ts';

// The telemetry tables on ClickHouse: per server a MergeTree table (`*_local`) holding that shard's
// rows, and a Distributed table of the same name without the suffix over all shards of the cluster.
// Spans are sharded by trace id, so one trace's spans meet on one shard (a request's facts are
// computed without moving spans between shards); metric points by series.
//
// Only SQL that ClickHouse 18.16 (Debian's package, used by the tests) and current releases both
// accept: no DateTime64, Map, TTL or skip indexes; nanoseconds as Int64; BOOLEAN as UInt8;
// attributes as JSON text (read with visitParamExtract*); a Nullable column never in a sorting key.
// Partitions are days of event time, so retention drops whole partitions.
//
// ReplacingMergeTree keyed by a row's identity (a span: trace and span id; a point: its series and
// time): an INSERT refused on one shard may have been written on another ("Wrote 188 rows on shard
// 0 … Code: 210"), and the OTLP client then sends the batch again. The copies merge away in the
// background; until then a read that must count each row once uses FINAL (per shard: a span's
// copies, like a series' points, always land on the same shard).
// ON CLUSTER needs ZooKeeper/Keeper, which the tests do not run: the statements run on each server.

/** Columns that are NOT NULL in DuckDB's span_store (0001_spans.sql); a test keeps the two equal. */
export const SPAN_NOT_NULL = new Set([
  'trace_id',
  'span_id',
  'name',
  'kind',
  'start_ns',
  'end_ns',
  'duration_ms',
  'status_code',
  'is_root',
  'task_id',
  'outcome',
]);
/** Columns that are NOT NULL in DuckDB's metric_store (0002_metric_points.sql). */
export const METRIC_NOT_NULL = new Set(['name', 'type', 'time_ns', 'is_monotonic', 'temporality']);

const CLICKHOUSE_TYPES: Readonly<Record<SpanColumnType, string>> = {
  VARCHAR: 'String',
  JSON: 'String',
  BIGINT: 'Int64',
  INTEGER: 'Int32',
  TINYINT: 'Int8',
  UTINYINT: 'UInt8',
  DOUBLE: 'Float64',
  BOOLEAN: 'UInt8',
};

export interface ClickHouseSchemaOptions {
  database: string;
  cluster: string;
}

/** A metric point's series beyond its name (no Nullable column in a sorting key on 18.16). */
const METRIC_SERIES =
  "ifNull(service, ''), ifNull(pool, ''), ifNull(replica, ''), cityHash64(ifNull(attributes, ''), ifNull(resource, ''))";

const DAY_OF_NS = (column: string) => `toDate(toDateTime(intDiv(${column}, 1000000000)))`;

function columnList(
  columns: readonly { column: string; type: SpanColumnType }[],
  notNull: ReadonlySet<string>,
): string {
  return columns
    .map(({ column, type }) => {
      const base = CLICKHOUSE_TYPES[type];
      return `  ${column} ${notNull.has(column) ? base : `Nullable(${base})`}`;
    })
    .join(',\n');
}

/**
 * The newest event of each table, kept by a materialized view per shard (the largest end or time of
 * every block inserted): the signals' watermark reads these few rows instead of a whole column.
 */
export const NEWEST_EVENT = [
  { table: 'span_newest', source: 'span_store', column: 'end_ns' },
  { table: 'metric_newest', source: 'metric_store', column: 'time_ns' },
] as const;

/** The statements that create the telemetry tables on one server (idempotent). */
export function clickHouseSchemaStatements(options: ClickHouseSchemaOptions): string[] {
  const db = quoteIdentifier(options.database);
  const cluster = quoteIdentifier(options.cluster);
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,
    `CREATE TABLE IF NOT EXISTS ${db}.span_store_local (\n${columnList(SPAN_COLUMNS, SPAN_NOT_NULL)}\n)
ENGINE = ReplacingMergeTree()
PARTITION BY ${DAY_OF_NS('start_ns')}
ORDER BY (intDiv(start_ns, 60000000000), trace_id, span_id)`,
    `CREATE TABLE IF NOT EXISTS ${db}.span_store AS ${db}.span_store_local
ENGINE = Distributed(${cluster}, ${db}, span_store_local, cityHash64(trace_id))`,
    `CREATE TABLE IF NOT EXISTS ${db}.metric_store_local (\n${columnList(METRIC_POINT_COLUMNS, METRIC_NOT_NULL)}\n)
ENGINE = ReplacingMergeTree()
PARTITION BY ${DAY_OF_NS('time_ns')}
ORDER BY (name, ${METRIC_SERIES}, time_ns)`,
    `CREATE TABLE IF NOT EXISTS ${db}.metric_store AS ${db}.metric_store_local
ENGINE = Distributed(${cluster}, ${db}, metric_store_local, cityHash64(name, ${METRIC_SERIES}))`,
    ...NEWEST_EVENT.flatMap(({ table, source, column }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.${table}_local (k UInt8, newest_ns Int64)
ENGINE = ReplacingMergeTree(newest_ns)
ORDER BY k`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${table}_mv TO ${db}.${table}_local
AS SELECT toUInt8(0) AS k, max(${column}) AS newest_ns FROM ${db}.${source}_local`,
      `CREATE TABLE IF NOT EXISTS ${db}.${table} AS ${db}.${table}_local
ENGINE = Distributed(${cluster}, ${db}, ${table}_local, rand())`,
    ]),
  ];
}

/** A table column as DuckDB describes it. */
export interface DescribedColumn {
  name: string;
  type: string;
  notNull: boolean;
}

/** The columns of one of Governor's DuckDB tables, from a fresh in-memory database. */
export async function describeDuckDbTable(table: string): Promise<DescribedColumn[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await runMigrations(connection);
    const reader = await connection.runAndReadAll(`DESCRIBE ${table}`);
    return reader.getRowObjectsJS().map((r) => ({
      name: String(r.column_name),
      type: String(r.column_type),
      notNull: r.null === 'NO',
    }));
  } finally {
    connection.closeSync();
  }
}

export const MINUTE_NS = 60_000_000_000n;

/**
 * request_facts on ClickHouse: DuckDB's columns (every refresh computes rows with the same SQL,
 * request-facts are written by the nodes' rollups) plus `version` (the refresh's time, ns) and
 * `deleted`: a refresh writes each row it computed as a new version of its key (trace id, start),
 * and a tombstone (deleted = 1) for each earlier row of the trace that it no longer has (a trace
 * whose spans were further apart than the idle time holds several requests, and a later span may
 * join them, or move a request's start). So `FINAL … WHERE deleted = 0` reads the current rows,
 * each shard on its own (a key's versions share its shard and its day partition).
 *
 * Sorted by the minute a request started, then its key: the reads select requests by time, the
 * rollup reads a trace's rows within the time its lookup reaches back. But a window selects by END
 * time, and a request may last long. request_extent bounds that: per minute of start, the longest a
 * request starting in it lasted (rows written with the facts, each at least the longest stored:
 * reads take the maximum), so the requests ending after a time T start at or after the first minute
 * whose start plus its longest request reaches past T (factsFromNs) — a bound on the sort key's
 * first column that ClickHouse uses to skip everything earlier.
 */
export function requestFactsStatements(
  options: ClickHouseSchemaOptions,
  columns: readonly DescribedColumn[],
): string[] {
  const db = quoteIdentifier(options.database);
  const cluster = quoteIdentifier(options.cluster);
  const list = columns
    .map((c) => {
      const base = CLICKHOUSE_TYPES[c.type as SpanColumnType];
      if (!base) throw new Error(`request_facts.${c.name}: no ClickHouse type for DuckDB's ${c.type}`);
      return `  ${c.name} ${c.notNull ? base : `Nullable(${base})`}`;
    })
    .join(',\n');
  return [
    `CREATE TABLE IF NOT EXISTS ${db}.request_facts_local (\n${list},\n  version UInt64,\n  deleted UInt8\n)
ENGINE = ReplacingMergeTree(version)
PARTITION BY ${DAY_OF_NS('start_ns')}
ORDER BY (intDiv(start_ns, ${MINUTE_NS}), trace_id, start_ns)`,
    `CREATE TABLE IF NOT EXISTS ${db}.request_facts AS ${db}.request_facts_local
ENGINE = Distributed(${cluster}, ${db}, request_facts_local, cityHash64(trace_id))`,
    `CREATE TABLE IF NOT EXISTS ${db}.request_extent_local (
  minute_ns Int64,
  max_duration_ns Int64
)
ENGINE = MergeTree()
PARTITION BY ${DAY_OF_NS('minute_ns')}
ORDER BY minute_ns`,
    `CREATE TABLE IF NOT EXISTS ${db}.request_extent AS ${db}.request_extent_local
ENGINE = Distributed(${cluster}, ${db}, request_extent_local, intDiv(minute_ns, ${MINUTE_NS}))`,
  ];
}

/** A ClickHouse identifier in backquotes (a database or cluster name from the config). */
export function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new Error(`"${name}" is not a ClickHouse identifier this store accepts: use letters, digits and _`);
  return name;
}
