import { gpuTypeFromProduct } from '@governor/otlp';
import { GROUP_DIMENSIONS, type GovernorConfig, type GroupDimension } from '@governor/conventions';
import type { Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import { HOP_KEYS, type GroupKey } from '../signal-group.ts';
import { type ParamValue, pickSqlParams, toNumberOrNull } from '../sql-params.ts';
import { narrowGroupKeys } from './narrow-group-keys.ts';
import { foldWindowFlags } from './window-params.ts';

// Runs the window queries and types their rows. Heavy lifting (percentiles, counts) happens in
// DuckDB; cost allocation and ratios are computed from these rows in assemble-groups.ts.
//
// A window is read by three statements that run in parallel on separate connections: the
// request-level sums per (bucket, group, pool) — added up here into the group's figures, the
// group's use of each pool, and each pool's usage — the percentiles per (bucket, group), and the
// pools' gauges; after the gauges, a narrow scan for the replicas and dimensions the requests named,
// only for the pools whose gauge and config leave one unknown (pool-span-facts.sql). The wide scan
// of the window's requests thus runs twice, not once per kind of figure. Both wide queries group
// by only the keys that vary (narrow-group-keys.ts).
//
// Over a 5-minute window of 20M spans (`bench signals`, 114,884 requests), those two changes took
// the snapshot's CPU p50 from 128–161 to 105–124 ms and its p95 from 78–118 to 68–86 ms across the
// five groupings (three runs each way): the narrow key lists ~4 ms in each wide query, the skipped
// scan ~7 ms when gauges and config describe every pool.
//
// The group cap (windowed-requests.sql) ranks the window's groups and joins every request back to
// its rank: 10–15 ms of each wide query over a 5-minute window of 20M spans (snapshot p50 85–99 →
// 73–80 ms without it), for windows that almost never hold more than the cap. So a grouping runs
// without the cap until a window of it holds more groups than that — then it is run again with
// the cap, and the same grouping (its dimensions) starts with the cap until a window fits again.
// An uncapped query past the cap returns its group count alone, not its rows (limitGroups), so no
// read converts 50,000 groups on the event loop.

const UNCAPPED = { swap: { 'windowed-requests.sql': 'windowed-requests-uncapped.sql' } } as const;
const KEY_DIMENSIONS = GROUP_DIMENSIONS.map((d) => `k_${d}`).join(', ');

/**
 * Wraps an uncapped window query: its rows when they hold at most $max_groups groups (over every
 * bucket, in_filter rows only where the query has that column), else one row without them; every
 * row carries the count as `uncapped_groups`, and a row without a bucket is no result row.
 */
function limitGroups(sql: string, inFilterColumn: boolean): string {
  return `WITH window_result AS MATERIALIZED (
${sql}
),
window_groups AS (
  SELECT count(*) AS uncapped_groups
  FROM (SELECT DISTINCT ${KEY_DIMENSIONS} FROM window_result${inFilterColumn ? ' WHERE in_filter' : ''})
)
SELECT g.uncapped_groups, r.*
FROM window_groups g
LEFT JOIN window_result r ON g.uncapped_groups <= $max_groups::BIGINT`;
}

export const WINDOW_SQL = {
  aggregates: loadSql(import.meta.url, 'request-aggregates.sql'),
  aggregatesUncapped: limitGroups(loadSql(import.meta.url, 'request-aggregates.sql', UNCAPPED), true),
  percentiles: loadSql(import.meta.url, 'request-percentiles.sql'),
  percentilesUncapped: limitGroups(loadSql(import.meta.url, 'request-percentiles.sql', UNCAPPED), false),
  gauges: loadSql(import.meta.url, 'pool-gauges.sql'),
  spanFacts: loadSql(import.meta.url, 'pool-span-facts.sql'),
  poolUsage: loadSql(import.meta.url, 'pool-usage.sql'),
  learnedPeak: loadSql(import.meta.url, 'learned-peak.sql'),
} as const;

export type Row = Record<string, unknown>;

/** The group key of a row: the k_* dimension columns and k_other (the group past the cap). */
const KEY_COLUMNS = [...GROUP_DIMENSIONS.map((d) => `k_${d}`), 'k_other'];

/** Counts and sums of request-aggregates.sql that add up across its rows. */
const ADDITIVE = [
  'requests',
  'raw_requests',
  'sampled_requests',
  'errors',
  'overload_errors',
  'preempted',
  'retries',
  'cache_hits',
  'cache_known',
  'kv_usage_sum',
  'kv_usage_n',
  'queue_depth_sum',
  'queue_depth_n',
  'share_n',
  'ttft_share_n',
  ...HOP_KEYS.flatMap((hop) => [`hop_${hop}_share_sum`, `hop_${hop}_ttft_share_sum`]),
  'tasks',
  'successful_tasks',
  'good_tasks',
  'abandoned_tasks',
  'pending_tasks',
] as const;
/** Sums that stay NULL when no request carried the value (e.g. no token counts: tokens/s unknown). */
const NULLABLE_SUMS = ['output_tokens', 'input_tokens', 'gpu_ms', 'explicit_cost_usd'] as const;
/** What a group used of a pool: the basis for allocating the pool's cost. */
const USAGE = ['requests', 'gpu_ms', 'tokens', 'output_tokens', 'explicit_cost_usd'] as const;

export interface WindowRows {
  /** Per (bucket, group): counts, rates, hop shares, tasks and percentiles. */
  requests: Row[];
  /** Per (bucket, pool): what the pool served, its gauges and its config. */
  pools: Row[];
  /** Per (bucket, group, pool): what the group's requests used of the pool. */
  weights: Row[];
  /** Groups over the whole range before the cap; those past it come as one `k_other` group. */
  groupCount: number;
}

/** Rewrites a window query before it runs (the raw-scan source swaps request_facts for spans). */
export type SqlTransform = (sql: string) => string;

/** How one engine runs a window's queries (DuckDB here, ClickHouse in clickhouse-window-queries.ts). */
export interface WindowQueries {
  /** Identifies the store, for the per-store record of which groupings needed the cap. */
  readonly storeKey: object;
  /**
   * request-aggregates and request-percentiles: capped, or uncapped in limitGroups' shape (each row
   * carries `uncapped_groups`; past the cap, one row without a bucket). Without `percentiles` the
   * second query is not run and its rows are empty.
   */
  requests(capped: boolean, percentiles?: boolean): Promise<[Row[], Row[]]>;
  /** pool-gauges: per (bucket, pool) rows, and the DCGM figures per pool in rows without a bucket. */
  gauges(): Promise<Row[]>;
  /** pool-span-facts for the pools not in `covered`. */
  spanFacts(covered: readonly string[]): Promise<Row[]>;
  /** pool-usage: what each pool served (requests outside any grouping). */
  poolUsage(): Promise<Row[]>;
}

/** The window queries on the embedded DuckDB store. */
export function duckDbWindowQueries(
  store: Pick<Store, 'query'>,
  params: Record<string, ParamValue>,
  transform: SqlTransform = (sql) => sql,
): WindowQueries {
  const run = (sql: string, extra: Record<string, ParamValue> = {}) => {
    const final = foldWindowFlags(transform(sql), params);
    return store.query<Row>(final, pickSqlParams(final, { ...params, ...extra }));
  };
  const manyBuckets =
    BigInt(params.step_ns as bigint) < BigInt(params.to_ns as bigint) - BigInt(params.from_ns as bigint);
  const runKeyed = (sql: string, capped: boolean) =>
    run(narrowGroupKeys(sql, params, { manyBuckets, capped }));
  return {
    storeKey: store,
    requests: (capped, percentiles = true) =>
      Promise.all([
        runKeyed(capped ? WINDOW_SQL.aggregates : WINDOW_SQL.aggregatesUncapped, capped),
        percentiles
          ? runKeyed(capped ? WINDOW_SQL.percentiles : WINDOW_SQL.percentilesUncapped, capped)
          : Promise.resolve([]),
      ]),
    gauges: () => run(WINDOW_SQL.gauges),
    spanFacts: (covered) => run(WINDOW_SQL.spanFacts, { covered_json: JSON.stringify(covered) }),
    poolUsage: () => run(WINDOW_SQL.poolUsage),
  };
}

/**
 * `countsOnly`: the groups' request counts and sums (requests, failures, retries, tasks) without
 * their percentiles and without the pools' gauges — what a reader that needs no latency, cost or
 * utilization asks for, at the cost of one query instead of three or four.
 */
export async function runWindowQueries(
  queries: WindowQueries,
  params: Record<string, ParamValue>,
  config: GovernorConfig,
  options: { countsOnly?: boolean } = {},
): Promise<WindowRows> {
  const maxGroups = Number(params.max_groups);
  const grouping = groupingId(params);
  const capNeeded = capNeededByGrouping(queries.storeKey);
  const withPercentiles = !options.countsOnly;
  const requestQueries = (capped: boolean) => queries.requests(capped, withPercentiles);
  const capFirst = capNeeded.get(grouping) ?? false;
  const [requestRows, gauges] = await Promise.all([
    requestQueries(capFirst),
    options.countsOnly
      ? Promise.resolve<PoolGauges>({ byBucket: new Map(), dcgm: new Map() })
      : readPoolGauges(queries, params, config),
  ]);
  let [aggregates, percentiles] = requestRows;
  let groupCount: number;
  if (capFirst) groupCount = cappedGroupCount(aggregates);
  else {
    groupCount = toNumberOrNull(aggregates[0]?.uncapped_groups) ?? 0;
    aggregates = aggregates.filter(isResultRow);
    percentiles = percentiles.filter(isResultRow);
  }
  if (!capFirst && groupCount > maxGroups) {
    [aggregates, percentiles] = await requestQueries(true);
    groupCount = cappedGroupCount(aggregates);
  }
  capNeeded.set(grouping, groupCount > maxGroups);

  const rolled = rollUpAggregates(aggregates);
  for (const row of percentiles) {
    const group = rolled.groups.get(rowKey(row));
    if (group) Object.assign(group, row);
  }
  return {
    requests: [...rolled.groups.values()].map(finishGroup),
    pools: buildPoolRows(rolled.pools, gauges, config),
    weights: rolled.weights,
    groupCount,
  };
}

/** Per store, whether the last window of a grouping held more groups than the cap. */
const capNeededByStore = new WeakMap<object, Map<string, boolean>>();

function capNeededByGrouping(store: object): Map<string, boolean> {
  let byGrouping = capNeededByStore.get(store);
  if (!byGrouping) {
    byGrouping = new Map();
    capNeededByStore.set(store, byGrouping);
  }
  return byGrouping;
}

/**
 * The dimensions grouped by (at most 2^7 of them; filters only lessen the groups, and their values
 * would make the map grow with every one asked for).
 */
function groupingId(params: Readonly<Record<string, ParamValue>>): string {
  return Object.keys(params)
    .filter((name) => name.startsWith('by_') && params[name] === true)
    .sort()
    .join(',');
}

/** Groups before the cap, as the capped queries report them. */
function cappedGroupCount(aggregates: readonly Row[]): number {
  return aggregates.reduce((n, row) => Math.max(n, toNumberOrNull(row.group_count) ?? 0), 0);
}

/** A row of an uncapped query's result (limitGroups adds one without a bucket when there is none). */
function isResultRow(row: Row): boolean {
  return row.bucket !== null && row.bucket !== undefined;
}

/** Only the per-pool rows of a window (what each pool served, its gauges and config). */
export async function runPoolQueries(
  queries: WindowQueries,
  params: Record<string, ParamValue>,
  config: GovernorConfig,
): Promise<Row[]> {
  const [usage, gauges] = await Promise.all([queries.poolUsage(), readPoolGauges(queries, params, config)]);
  return buildPoolRows(rollUpAggregates(usage).pools, gauges, config);
}

interface PoolGauges {
  /** Per (bucket, pool): gauges (pool-gauges.sql) and span facts (pool-span-facts.sql). */
  byBucket: Map<string, Row>;
  /** Per pool: the GPUs DCGM sees its pods hold. */
  dcgm: Map<string, Row>;
}

/**
 * The pools' gauges, then what their requests named — only for the pools that need it: a pool
 * whose replica gauge covers every bucket and whose config entry names its model, region and GPU
 * type would not use it (pool-span-facts.sql).
 */
async function readPoolGauges(
  queries: WindowQueries,
  params: Readonly<Record<string, ParamValue>>,
  config: GovernorConfig,
): Promise<PoolGauges> {
  const byBucket = new Map<string, Row>();
  const dcgm = new Map<string, Row>();
  const gaugedBuckets = new Map<string, number>();
  for (const row of await queries.gauges()) {
    if (!isResultRow(row)) {
      if (typeof row.pool === 'string') dcgm.set(row.pool, row);
      continue;
    }
    byBucket.set(poolKey(row), row);
    if (typeof row.pool === 'string' && row.replica_ns !== null && row.replica_ns !== undefined)
      gaugedBuckets.set(row.pool, (gaugedBuckets.get(row.pool) ?? 0) + 1);
  }
  const buckets = windowBucketCount(params);
  const covered = config.pools
    .filter((p) => p.model && p.region && p.gpu_type && gaugedBuckets.get(p.name) === buckets)
    .map((p) => p.name);
  for (const row of await queries.spanFacts(covered)) {
    const id = poolKey(row);
    byBucket.set(id, { ...row, ...byBucket.get(id) });
  }
  return { byBucket, dcgm };
}

/** Buckets of a window query (the last one may be cut short by to_ns). */
function windowBucketCount(params: Readonly<Record<string, ParamValue>>): number {
  const stepNs = BigInt(params.step_ns as bigint);
  return Number((BigInt(params.to_ns as bigint) - BigInt(params.from_ns as bigint) + stepNs - 1n) / stepNs);
}

/**
 * Adds up request-aggregates.sql rows per group (in_filter rows), per (group, pool) and per pool;
 * pool-usage.sql rows (no in_filter) add to the pools only.
 */
function rollUpAggregates(aggregates: readonly Row[]) {
  const groups = new Map<string, Row>();
  const pools = new Map<string, Row>();
  const weights: Row[] = [];
  for (const row of aggregates) {
    const poolId = poolKey(row);
    let usage = pools.get(poolId);
    if (!usage) {
      usage = { bucket: row.bucket, pool: row.pool ?? null };
      pools.set(poolId, usage);
    }
    addUsage(usage, row);
    if (row.in_filter !== true) continue;
    weights.push(pick(row, ['bucket', ...KEY_COLUMNS, 'pool', ...USAGE]));
    const id = rowKey(row);
    let group = groups.get(id);
    if (!group) {
      group = pick(row, ['bucket', ...KEY_COLUMNS]);
      groups.set(id, group);
    }
    for (const column of ADDITIVE)
      group[column] = (toNumberOrNull(group[column]) ?? 0) + (toNumberOrNull(row[column]) ?? 0);
    for (const column of NULLABLE_SUMS) group[column] = addNullable(group[column], row[column]);
  }
  return { groups, pools, weights };
}

function buildPoolRows(pools: Map<string, Row>, gauges: PoolGauges, config: GovernorConfig): Row[] {
  const configPools = new Map(config.pools.map((p) => [p.name, p]));
  for (const [id, g] of gauges.byBucket) {
    if (!pools.has(id)) pools.set(id, { bucket: g.bucket, pool: g.pool ?? null });
  }
  return [...pools.entries()].map(([id, u]) => {
    const gauge = gauges.byBucket.get(id) ?? {};
    const dcgm = (typeof u.pool === 'string' ? gauges.dcgm.get(u.pool) : undefined) ?? {};
    const cfg = typeof u.pool === 'string' ? configPools.get(u.pool) : undefined;
    return {
      bucket: u.bucket,
      pool: u.pool,
      requests: toNumberOrNull(u.requests) ?? 0,
      gpu_ms: u.gpu_ms ?? null,
      tokens: toNumberOrNull(u.tokens) ?? 0,
      output_tokens: u.output_tokens ?? null,
      explicit_cost_usd: u.explicit_cost_usd ?? null,
      span_replicas: toNumberOrNull(gauge.span_replicas) ?? 0,
      replica_ns: gauge.replica_ns ?? null,
      covered_ns: gauge.covered_ns ?? null,
      model: cfg?.model ?? gauge.model ?? null,
      region: cfg?.region ?? gauge.region ?? null,
      gpu_type:
        cfg?.gpu_type ??
        gauge.gpu_type ??
        (typeof dcgm.gpu_product === 'string'
          ? gpuTypeFromProduct(dcgm.gpu_product, Object.keys(config.pricing.gpu_hour_usd))
          : null),
      // The GPUs DCGM sees each pod hold, when it reports them; else the config's.
      gpus_per_replica: toNumberOrNull(dcgm.dcgm_gpus_per_replica) ?? cfg?.gpus_per_replica ?? null,
      peak_tokens_per_s: cfg?.peak_tokens_per_s_per_replica ?? null,
      kv_usage: gauge.kv_usage ?? ratio(u.kv_usage_sum, u.kv_usage_n),
      queue_depth: gauge.queue_depth ?? ratio(u.queue_depth_sum, u.queue_depth_n),
    } satisfies Row;
  });
}

/** Adds one aggregates row (any group, filtered or not) to its pool's usage. */
function addUsage(u: Row, row: Row): void {
  u.requests = (toNumberOrNull(u.requests) ?? 0) + (toNumberOrNull(row.requests) ?? 0);
  u.tokens = (toNumberOrNull(u.tokens) ?? 0) + (toNumberOrNull(row.tokens) ?? 0);
  for (const column of ['gpu_ms', 'output_tokens', 'explicit_cost_usd'] as const)
    u[column] = addNullable(u[column], row[column]);
  for (const column of ['kv_usage_sum', 'kv_usage_n', 'queue_depth_sum', 'queue_depth_n'] as const)
    u[column] = addNullable(u[column], row[column]);
}

/** Turns a group's summed row into the figures assemble-groups.ts reads. */
function finishGroup(group: Row): Row {
  const out: Row = { ...group };
  out.span_kv_usage = ratio(group.kv_usage_sum, group.kv_usage_n);
  out.span_queue_depth = ratio(group.queue_depth_sum, group.queue_depth_n);
  for (const hop of HOP_KEYS) {
    out[`hop_${hop}_share`] = ratio(group[`hop_${hop}_share_sum`], group.share_n);
    out[`hop_${hop}_ttft_share`] = ratio(group[`hop_${hop}_ttft_share_sum`], group.ttft_share_n);
  }
  return out;
}

function addNullable(a: unknown, b: unknown): number | null {
  const x = toNumberOrNull(a);
  const y = toNumberOrNull(b);
  return x === null ? y : y === null ? x : x + y;
}

function ratio(sum: unknown, count: unknown): number | null {
  const n = toNumberOrNull(count);
  return n === null || n <= 0 ? null : (toNumberOrNull(sum) ?? 0) / n;
}

function pick(row: Row, columns: readonly string[]): Row {
  const out: Row = {};
  for (const c of columns) out[c] = row[c] ?? null;
  return out;
}

function rowKey(row: Row): string {
  return JSON.stringify([toNumberOrNull(row.bucket), ...KEY_COLUMNS.map((c) => row[c] ?? null)]);
}

function poolKey(row: Row): string {
  return JSON.stringify([toNumberOrNull(row.bucket), row.pool ?? null]);
}

/** The key of the group past the cap: no dimension (with `by` non-empty no other key is empty). */
export const OTHER_GROUP_KEY: GroupKey = Object.freeze({});

/** The group key of a row (k_* columns) restricted to the dimensions grouped by. */
export function readGroupKey(row: Row, by: readonly GroupDimension[]): GroupKey {
  if (row.k_other === true) return OTHER_GROUP_KEY;
  const key: GroupKey = {};
  for (const dim of by) {
    const v = row[`k_${dim}`];
    key[dim] = v === undefined || v === null ? null : typeof v === 'number' ? v : String(v);
  }
  return key;
}

/** A stable string for a group key, in GROUP_DIMENSIONS order. */
export function groupKeyId(key: GroupKey): string {
  return JSON.stringify(GROUP_DIMENSIONS.filter((d) => d in key).map((d) => [d, key[d] ?? null]));
}
