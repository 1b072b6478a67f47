import type { ClickHouseClient } from '@clickhouse/client';
import type { StorageStats, TableStorage } from '../retention/collect-storage-stats.ts';

// Disk usage on ClickHouse for GET /api/storage and /metrics: the active parts of Governor's local
// tables on every shard (system.parts), summed per table. ClickHouse has no WAL or block figures of
// the embedded file's kind: `database.fileBytes` is the parts' bytes on disk, the rest 0.

const TABLES = ['span_store', 'metric_store', 'request_facts'] as const;

export async function collectClickHouseStorage(
  shards: readonly ClickHouseClient[],
  database: string,
): Promise<StorageStats> {
  const totals = new Map<string, { rows: number; bytes: number }>(
    TABLES.map((t) => [t, { rows: 0, bytes: 0 }]),
  );
  for (const shard of shards) {
    const result = await shard.query({
      query: `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
              WHERE database = '${database}' AND active AND table IN (${TABLES.map((t) => `'${t}_local'`).join(', ')})
              GROUP BY table`,
      format: 'JSONEachRow',
    });
    for (const row of await result.json<{ table: string; rows: string; bytes: string }>()) {
      const t = totals.get(row.table.replace(/_local$/, ''));
      if (!t) continue;
      t.rows += Number(row.rows);
      t.bytes += Number(row.bytes);
    }
  }
  const tables: TableStorage[] = [...totals].map(([table, t]) => ({ table, rows: t.rows, bytes: t.bytes }));
  return {
    collectedAt: new Date().toISOString(),
    database: {
      fileBytes: tables.reduce((n, t) => n + t.bytes, 0),
      walBytes: 0,
      blockSize: 0,
      usedBlocks: 0,
      freeBlocks: 0,
    },
    tables,
    exports: [],
    lastRetentionRuns: [],
  };
}
