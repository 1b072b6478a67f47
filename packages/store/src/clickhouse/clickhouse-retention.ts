import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { RetentionTargetName } from '../retention/retention-targets.ts';
import type { RetentionPolicy, RetentionReport, RetentionTargetReport } from '../retention/run-retention.ts';

// Retention on ClickHouse: the tables are partitioned by event day (clickhouse-schema.ts), and a day
// whose every row is past its TTL is dropped on each shard — whole parts, no rewrite. Not the
// embedded engine's export to Parquet: the rows are gone (operators keep history in ClickHouse by a
// longer TTL, or back it up with ClickHouse's own tools). No TTL clause: 18.16 has none.

// A target's first table holds its rows; request_extent (clickhouse-schema.ts), partitioned by the
// same days, goes with request_facts (its rows are not counted).
const TABLES: readonly { target: RetentionTargetName; tables: readonly string[] }[] = [
  { target: 'spans', tables: ['span_store_local'] },
  { target: 'metric_points', tables: ['metric_store_local'] },
  { target: 'request_facts', tables: ['request_facts_local', 'request_extent_local'] },
];
const DAY_NS = 86_400_000_000_000n;

export async function runClickHouseRetention(
  shards: readonly ClickHouseClient[],
  database: string,
  policy: RetentionPolicy,
): Promise<RetentionReport> {
  const startedAt = new Date();
  const runId = `r${startedAt.toISOString().replace(/[-:.]/g, '').slice(0, 15)}z${randomBytes(3).toString('hex')}`;
  const nowNs = policy.nowNs ?? BigInt(Date.now()) * 1_000_000n;
  const targets: RetentionTargetReport[] = [];
  for (const { target, tables } of TABLES) {
    const started = performance.now();
    const ttlHours =
      target === 'metric_points'
        ? (policy.ttlHours.metric_points ?? policy.ttlHours.spans)
        : policy.ttlHours[target];
    const report: RetentionTargetReport = {
      target,
      status: 'skipped',
      watermarkNs: null,
      cutoffNs: null,
      rowsExported: 0,
      rowsDeleted: 0,
      bytesExported: 0,
      files: [],
      durationMs: 0,
    };
    if (ttlHours && ttlHours > 0) {
      const cutoffNs = nowNs - BigInt(Math.round(ttlHours * 3_600_000)) * 1_000_000n;
      // The last day all of whose rows are older than the cutoff.
      const lastDay = new Date(Number((cutoffNs / DAY_NS) * DAY_NS - DAY_NS) / 1e6)
        .toISOString()
        .slice(0, 10);
      report.cutoffNs = cutoffNs.toString();
      try {
        await policy.beforeSlice?.();
        for (const shard of shards)
          for (const table of tables) {
            const result = await shard.query({
              query: `SELECT partition, sum(rows) AS rows FROM system.parts
                    WHERE database = {db:String} AND table = {table:String} AND active
                    GROUP BY partition HAVING partition <= {last:String} ORDER BY partition`.replace(
                /\{(\w+):String\}/g,
                (_m, name: string) => `'${{ db: database, table, last: lastDay }[name]}'`,
              ),
              format: 'JSONEachRow',
            });
            const parts = await result.json<{ partition: string; rows: string }>();
            for (const p of parts) {
              if (!/^\d{4}-\d{2}-\d{2}$/.test(p.partition)) continue;
              await shard.command({
                query: `ALTER TABLE ${database}.${table} DROP PARTITION '${p.partition}'`,
              });
              if (table === tables[0]) report.rowsDeleted += Number(p.rows);
            }
          }
        report.status = 'ok';
      } catch (error) {
        report.status = 'failed';
        report.error = (error as Error).message.split('\n')[0];
      }
    }
    report.durationMs = performance.now() - started;
    targets.push(report);
  }
  return { runId, startedAt: startedAt.toISOString(), targets };
}
