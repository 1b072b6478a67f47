import { loadSql } from '../load-sql.ts';
import type { SqlReader } from '../sql-reader.ts';

const SQL = loadSql(import.meta.url, 'read-ready-replicas.sql');
const CLICKHOUSE_SQL = loadSql(import.meta.url, 'read-ready-replicas.clickhouse.sql');

/** Replicas serving per pool at an event time. */
export type ReadyReplicasReader = (atNs: bigint) => Promise<Map<string, number>>;

/**
 * Ready replicas per pool: a scale-up has taken effect once the new replicas serve (report runtime
 * gauges), not when they are merely paid for. `lookbackMs` bounds how stale a sample may be.
 * Reads the metric points, which show a point as soon as its write is acknowledged (DuckDB's
 * `metric_points`, ClickHouse's `metric_store`): no rollup to wait for on either engine.
 */
export function createReadyReplicasReader(db: SqlReader, lookbackMs = 60_000): ReadyReplicasReader {
  const sql = db.engine === 'clickhouse' ? CLICKHOUSE_SQL : SQL;
  return async (atNs) => {
    const rows = await db.query<{ pool: string; ready: number }>(sql, {
      from_ns: atNs - BigInt(lookbackMs) * 1_000_000n,
      at_ns: atNs,
    });
    return new Map(rows.map((r) => [r.pool, Number(r.ready)]));
  };
}
