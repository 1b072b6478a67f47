import { GROUP_DIMENSIONS, type GroupDimension } from '@governor/conventions';
import type { ParamValue } from './window-params.ts';

// The window queries name every key column (bucket, one k_* per dimension, k_other) in their
// SELECT and GROUP BY, so one text serves every grouping. DuckDB does not drop a constant column
// from a GROUP BY: over a 5-minute window of 20M spans grouped by pool, hashing and comparing the
// nine key columns instead of the one that varies cost ~4 ms of CPU in each of the two wide
// queries (counts 46 → 42, percentiles 54 → 49 ms, one DuckDB thread, EXPLAIN ANALYZE of the
// HASH_GROUP_BY). So before a query runs, its key list is narrowed to the keys that can vary —
// the dimensions grouped by, `bucket` when the window has more than one, `k_other` when the group
// cap is applied — and the others are selected as typed constants, keeping the columns the rows
// are read by (window-rows.ts).

/** The key list as the window queries write it, in their SELECT and in their GROUP BY. */
export const WINDOW_KEY_LIST =
  'bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other';

/** SQL type of each dimension's key column (request_facts). */
const KEY_TYPES: Readonly<Record<GroupDimension, string>> = {
  pool: 'VARCHAR',
  model: 'VARCHAR',
  region: 'VARCHAR',
  gpu_type: 'VARCHAR',
  tenant: 'VARCHAR',
  priority: 'INTEGER',
  workflow_type: 'VARCHAR',
};

export interface KeyShape {
  /** The window holds more than one bucket (a series), so `bucket` varies. */
  manyBuckets: boolean;
  /** The group cap is applied, so `k_other` varies (it is `false` in the uncapped queries). */
  capped: boolean;
}

/**
 * Rewrites a window query's key list (`SELECT\n  <WINDOW_KEY_LIST>,` and `GROUP BY
 * <WINDOW_KEY_LIST>`) to group only by the keys that vary. Throws when the query does not hold
 * both, so an edit of a query cannot quietly lose the narrowing or the grouping.
 */
export function narrowGroupKeys(
  sql: string,
  params: Readonly<Record<string, ParamValue>>,
  shape: KeyShape,
): string {
  const grouped = GROUP_DIMENSIONS.filter((d) => params[`by_${d}`] === true);
  const select = [
    shape.manyBuckets ? 'bucket' : '0::BIGINT AS bucket',
    ...GROUP_DIMENSIONS.map((d) => (grouped.includes(d) ? `k_${d}` : `NULL::${KEY_TYPES[d]} AS k_${d}`)),
    shape.capped ? 'k_other' : 'false AS k_other',
  ];
  const groupBy = [
    ...(shape.manyBuckets ? ['bucket'] : []),
    ...grouped.map((d) => `k_${d}`),
    ...(shape.capped ? ['k_other'] : []),
  ];
  const selectAt = `SELECT\n  ${WINDOW_KEY_LIST},`;
  const groupAt = `GROUP BY ${WINDOW_KEY_LIST}`;
  if (count(sql, selectAt) !== 1 || count(sql, groupAt) !== 1)
    throw new Error(`a window query must select and group by "${WINDOW_KEY_LIST}" once each`);
  // The counts also group by pool and in_filter, after the keys. With no key and nothing after
  // them, the query becomes an ungrouped aggregate: one row, also over an empty window (its
  // figures are NULL, and window-rows.ts merges percentiles only into groups the counts found).
  const more = sql.slice(sql.indexOf(groupAt) + groupAt.length).startsWith(',');
  const groupByText =
    groupBy.length > 0 ? `GROUP BY ${groupBy.join(', ')}${more ? ',' : ''}` : more ? 'GROUP BY' : '';
  return sql
    .replace(selectAt, () => `SELECT\n  ${select.join(', ')},`)
    .replace(more ? `${groupAt},` : groupAt, () => groupByText);
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}
