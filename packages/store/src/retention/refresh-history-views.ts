import type { DuckDBConnection } from '@duckdb/node-api';
import { exportGlob, listExportFiles } from './export-files.ts';
import { RETENTION_TARGETS } from './retention-targets.ts';

/**
 * Points `spans` and `metric_points` at the live table plus its exported Parquet history, or at
 * the live table alone while no file exists (read_parquet on a glob that matches nothing fails).
 * UNION ALL BY NAME keeps the live table's column list and order, so views built on `spans`
 * (requests, tasks) see the same columns either way; columns added to the table after a file was
 * written read as NULL there.
 */
export async function refreshHistoryViews(
  connection: DuckDBConnection,
  exportDir: string | null,
): Promise<void> {
  for (const target of RETENTION_TARGETS) {
    if (!target.view) continue;
    const hasFiles = exportDir !== null && listExportFiles(exportDir, target.name).length > 0;
    const live = `SELECT * FROM ${target.table}`;
    const sql = hasFiles
      ? `${live} UNION ALL BY NAME SELECT * EXCLUDE (date, hour) FROM read_parquet(${quote(exportGlob(exportDir!, target.name))}, hive_partitioning = true)`
      : live;
    await connection.run(`CREATE OR REPLACE VIEW ${target.view} AS ${sql}`);
  }
}

export function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
