import { GROUP_DIMENSIONS, type GovernorConfig } from '@governor/conventions';
import type { ClickHouseParam, ClickHouseReader } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import type { ParamValue } from './window-params.ts';
import type { Row, WindowQueries } from './window-rows.ts';

// The window queries on ClickHouse (docs/scale-out-design.md, decision 6): the *.clickhouse.sql
// files, with the window's parameters written in as literals and the config's pools as arrays.

const load = (file: string) => loadSql(import.meta.url, file);
const UNCAPPED = {
  swap: { 'windowed-requests.clickhouse.sql': 'windowed-requests-uncapped.clickhouse.sql' },
};
export const CLICKHOUSE_WINDOW_SQL = {
  aggregates: load('request-aggregates.clickhouse.sql'),
  aggregatesUncapped: loadSql(import.meta.url, 'request-aggregates.clickhouse.sql', UNCAPPED),
  percentiles: load('request-percentiles.clickhouse.sql'),
  percentilesUncapped: loadSql(import.meta.url, 'request-percentiles.clickhouse.sql', UNCAPPED),
  gauges: load('pool-gauges.clickhouse.sql'),
  spanFacts: load('pool-span-facts.clickhouse.sql'),
  learnedPeak: load('learned-peak.clickhouse.sql'),
  poolUsage: load('pool-usage.clickhouse.sql'),
} as const;

/** The config's pools as arrays aligned by index ($cfg_names, $cfg_models, …) for ClickHouse's indexOf. */
export function clickHouseConfigParams(config: GovernorConfig): Record<string, ClickHouseParam> {
  return {
    cfg_names: config.pools.map((p) => p.name),
    cfg_models: config.pools.map((p) => p.model ?? null),
    cfg_regions: config.pools.map((p) => p.region ?? null),
    cfg_gpu_types: config.pools.map((p) => p.gpu_type ?? null),
  };
}

const KEYS = [...GROUP_DIMENSIONS.map((d) => `k_${d}`)];

export function clickHouseWindowQueries(
  reader: ClickHouseReader,
  params: Readonly<Record<string, ParamValue>>,
  config: GovernorConfig,
): WindowQueries {
  const values: Record<string, ClickHouseParam> = { ...params, ...clickHouseConfigParams(config) };
  const run = (sql: string, extra: Record<string, ClickHouseParam> = {}, settings?: Record<string, number>) =>
    reader.query<Row>(sql, { ...values, ...extra }, settings);
  const maxGroups = Number(params.max_groups);
  return {
    storeKey: reader,
    async requests(capped, withPercentiles = true) {
      const booleans = (list: Row[]) =>
        list.map((r) => ({
          ...r,
          ...(r.in_filter === undefined ? {} : { in_filter: Number(r.in_filter) === 1 }),
          k_other: Number(r.k_other) === 1,
        }));
      const none = Promise.resolve<Row[]>([]);
      if (capped) {
        const [aggregates, percentiles] = await Promise.all([
          run(CLICKHOUSE_WINDOW_SQL.aggregates),
          withPercentiles ? run(CLICKHOUSE_WINDOW_SQL.percentiles) : none,
        ]);
        return [booleans(aggregates), booleans(percentiles)];
      }
      const [aggregates, percentiles] = await Promise.all([
        run(CLICKHOUSE_WINDOW_SQL.aggregatesUncapped),
        withPercentiles ? run(CLICKHOUSE_WINDOW_SQL.percentilesUncapped) : none,
      ]);
      // limitGroups' shape: the group count on every row (over the rows that pass the filter).
      const groups = new Set(
        aggregates
          .filter((r) => Number(r.in_filter) === 1)
          .map((r) => JSON.stringify(KEYS.map((k) => r[k] ?? null))),
      );
      const count = groups.size;
      if (count > maxGroups) return [[{ uncapped_groups: count, bucket: null }], []];
      const withCount = (list: Row[]) => booleans(list).map((r) => ({ ...r, uncapped_groups: count }));
      return [withCount(aggregates), withCount(percentiles)];
    },
    gauges: () => run(CLICKHOUSE_WINDOW_SQL.gauges, {}, { join_use_nulls: 1 }),
    spanFacts: (covered) => run(CLICKHOUSE_WINDOW_SQL.spanFacts, { covered: [...covered] }),
    poolUsage: () => run(CLICKHOUSE_WINDOW_SQL.poolUsage),
  };
}
