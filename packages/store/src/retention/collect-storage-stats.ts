import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ExportStorage, StorageStats, TableStorage } from '@governor/conventions';
import { toJsValue } from '../to-js-value.ts';
import { listExportFiles } from './export-files.ts';
import { ROLLUP_CATALOG, ROLLUP_FILE } from '../rollup-database.ts';
import { MAIN_FILE } from '../store-files.ts';
import { RETENTION_RUNS_TABLES, RETENTION_TARGETS } from './retention-targets.ts';

// Disk usage for GET /api/storage and governor_table_bytes on /metrics. Table bytes are the
// table's share of checkpointed blocks (pragma_storage_info); rows written since the last
// CHECKPOINT live in the WAL and are counted there.

export type { ExportStorage, StorageStats, TableStorage };

export async function collectStorageStats(
  connection: DuckDBConnection,
  dataDir: string,
  exportDir: string | null,
): Promise<StorageStats> {
  const rows = async (sql: string) =>
    (await connection.runAndReadAll(sql))
      .getRowObjectsJS()
      .map((r) => toJsValue(r) as Record<string, unknown>);
  const [size] = await rows(
    'SELECT block_size, used_blocks, free_blocks FROM pragma_database_size() WHERE database_name = current_database()',
  );
  const blockSize = Number(size?.block_size ?? 262_144);
  // The main database's tables and the rollup's (its own file, rollup-database.ts), by table name;
  // the rollup's retention_runs is internal bookkeeping, not a table users query.
  const tables = await rows(
    `SELECT database_name, table_name FROM duckdb_tables()
     WHERE NOT temporary AND schema_name = 'main'
       AND (database_name = current_database() OR (database_name = '${ROLLUP_CATALOG}' AND table_name <> 'retention_runs'))
     ORDER BY table_name`,
  );
  const tableStats: TableStorage[] = [];
  for (const t of tables) {
    const name = String(t.table_name);
    const qualified = `"${String(t.database_name).replaceAll('"', '""')}".main."${name.replaceAll('"', '""')}"`;
    // estimated_size still counts deleted rows until a checkpoint compacts them; count(*) does not.
    const [stat] = await rows(
      `SELECT (SELECT count(*) FROM ${qualified}) AS n,
              (SELECT count(DISTINCT block_id) FROM pragma_storage_info('${qualified.replaceAll("'", "''")}') WHERE persistent) AS blocks`,
    );
    tableStats.push({
      table: name,
      rows: Number(stat?.n ?? 0),
      bytes: Number(stat?.blocks ?? 0) * blockSize,
    });
  }
  // The main file and the rollup's: one database in two files, as operators back it up.
  const files = dataDir === ':memory:' ? [] : [join(dataDir, MAIN_FILE), join(dataDir, ROLLUP_FILE)];
  const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : 0);
  const exports: ExportStorage[] = exportDir
    ? RETENTION_TARGETS.map((target) => {
        const files = listExportFiles(exportDir, target.name);
        const partitions = files.map((f) => `${f.date}T${f.hour}`).sort();
        return {
          target: target.name,
          files: files.length,
          bytes: files.reduce((n, f) => n + f.bytes, 0),
          oldestPartition: partitions[0] ?? null,
          newestPartition: partitions.at(-1) ?? null,
        };
      })
    : [];
  const runs = await rows(
    // finished_at holds the wall clock in the session's time zone (now()::TIMESTAMP); answer RFC 3339 UTC.
    `SELECT target, state, strftime(timezone('UTC', finished_at::TIMESTAMPTZ), '%Y-%m-%dT%H:%M:%S.%gZ') AS finished_at,
            rows_exported, cutoff_ns::VARCHAR AS cutoff_ns, error
     FROM (${RETENTION_RUNS_TABLES.map((t) => `SELECT * FROM ${t}`).join(' UNION ALL ')}) QUALIFY row_number() OVER (PARTITION BY target ORDER BY started_at DESC) = 1 ORDER BY target`,
  );
  return {
    collectedAt: new Date().toISOString(),
    database: {
      fileBytes: files.reduce((n, f) => n + sizeOf(f), 0),
      walBytes: files.reduce((n, f) => n + sizeOf(`${f}.wal`), 0),
      blockSize,
      usedBlocks: Number(size?.used_blocks ?? 0),
      freeBlocks: Number(size?.free_blocks ?? 0),
    },
    tables: tableStats,
    exports,
    lastRetentionRuns: runs.map((r) => ({
      target: String(r.target),
      state: String(r.state),
      finishedAt: r.finished_at === null ? null : String(r.finished_at),
      rowsExported: Number(r.rows_exported ?? 0),
      cutoffNs: r.cutoff_ns === null ? null : String(r.cutoff_ns),
      error: r.error === null ? null : String(r.error),
    })),
  };
}
