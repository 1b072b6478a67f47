import { GROUP_DIMENSIONS, type GroupDimension } from '@governor/conventions';
import type { Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import { type ParamValue, pickSqlParams, toNumberOrNull } from '../sql-params.ts';
import type { GroupKey } from '../signal-group.ts';

// Runs the window queries and types their rows. Heavy lifting (percentiles, counts) happens in
// DuckDB; cost allocation and ratios are computed from these rows in assemble-groups.ts.

export const WINDOW_SQL = {
  requests: loadSql(import.meta.url, 'request-aggregates.sql'),
  more: loadSql(import.meta.url, 'more-percentiles.sql'),
  pools: loadSql(import.meta.url, 'pool-buckets.sql'),
  weights: loadSql(import.meta.url, 'group-weights.sql'),
  learnedPeak: loadSql(import.meta.url, 'learned-peak.sql'),
} as const;

export type Row = Record<string, unknown>;

const KEY_COLUMNS = GROUP_DIMENSIONS.map((d) => `k_${d}`);

export interface WindowRows {
  requests: Row[];
  pools: Row[];
  weights: Row[];
}

/** Rewrites a window query before it runs (the raw-scan source swaps request_facts for spans). */
export type SqlTransform = (sql: string) => string;

export async function runWindowQueries(
  store: Store,
  params: Record<string, ParamValue>,
  transform: SqlTransform,
  shape: { by: readonly GroupDimension[]; filtered: boolean },
): Promise<WindowRows> {
  const run = (sql: string) => {
    const final = transform(sql);
    return store.query<Row>(final, pickSqlParams(final, params));
  };
  // Grouped by pool (or not at all) and unfiltered, every group is whole pools: what a group used
  // of each pool is the pool's own usage, so the weights query is not needed.
  const weightsFromPools = !shape.filtered && shape.by.every((d) => d === 'pool');
  // The two sorting-heavy queries first: they run in parallel on separate connections.
  const [requests, more, pools, weights] = await Promise.all([
    run(WINDOW_SQL.requests),
    run(WINDOW_SQL.more),
    run(WINDOW_SQL.pools),
    weightsFromPools ? Promise.resolve(null) : run(WINDOW_SQL.weights),
  ]);
  const byPool = shape.by.includes('pool');
  const rowKey = (row: Row) => JSON.stringify([row.bucket, ...KEY_COLUMNS.map((c) => row[c] ?? null)]);
  const moreByKey = new Map(more.map((row) => [rowKey(row), row]));
  return {
    requests: requests.map((row) => ({ ...moreByKey.get(rowKey(row)), ...row })),
    pools,
    weights:
      weights ??
      pools
        .filter((p) => (toNumberOrNull(p.requests) ?? 0) > 0)
        .map((p) => ({ ...p, k_pool: byPool ? p.pool : null })),
  };
}

/** The group key of a row (k_* columns) restricted to the dimensions grouped by. */
export function readGroupKey(row: Row, by: readonly GroupDimension[]): GroupKey {
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
