import type { DuckDBConnection } from '@duckdb/node-api';
import { exportGlob, listExportFiles } from './export-files.ts';
import { STAGE_CATALOG } from '../ingest-stage.ts';
import { RETENTION_TARGETS } from './retention-targets.ts';

/**
 * Points `spans`, `metric_points` and `request_history` at the live table plus its exported Parquet history, or at
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
    const hasFiles = exportDir !== null && listExportFiles(exportDir, target.name).length > 0;
    const live = target.staged ? liveRows(target.table) : `SELECT * FROM ${target.table}`;
    const sql = hasFiles
      ? `${live} UNION ALL BY NAME SELECT * EXCLUDE (date, hour) FROM read_parquet(${quote(exportGlob(exportDir!, target.name))}, hive_partitioning = true)`
      : live;
    await connection.run(`CREATE OR REPLACE VIEW ${target.view} AS ${sql}`);
  }
}

/**
 * The table plus what the writer committed to the ingest stage during a checkpoint (acknowledged,
 * not yet moved): a span is readable as soon as its write is acknowledged. Staged rows the move has
 * already copied (slices recorded in ingest_stage_moves, in the same transaction as the copy) are
 * skipped, and all of them once the epoch is marked moved, so no row reads twice.
 */
function liveRows(table: string): string {
  const moves = `ingest_stage_moves m JOIN ${STAGE_CATALOG}.main.ingest_stage_epoch e ON m.epoch = e.epoch`;
  return `SELECT * FROM ${table} UNION ALL SELECT * FROM ${STAGE_CATALOG}.main.${table} s
    WHERE s.rowid > coalesce((SELECT max(m.through_rowid) FROM ${moves} WHERE m.table_name = '${table}'), -1)
      AND NOT EXISTS (SELECT 1 FROM ${moves} WHERE m.table_name IS NULL)`;
}

export function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
