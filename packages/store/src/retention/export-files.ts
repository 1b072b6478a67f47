import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Reads the export folder's hive layout: <export>/<target>/date=YYYY-MM-DD/hour=HH/*.parquet.

export interface ExportFile {
  /** Relative to the export folder. */
  path: string;
  date: string;
  hour: string;
  bytes: number;
}

const DATE_DIR = /^date=(\d{4}-\d{2}-\d{2})$/;
const HOUR_DIR = /^hour=(\d{2})$/;

export function listExportFiles(exportDir: string, target: string): ExportFile[] {
  const root = join(exportDir, target);
  if (!existsSync(root)) return [];
  const files: ExportFile[] = [];
  for (const dateDir of readdirSync(root)) {
    const date = DATE_DIR.exec(dateDir)?.[1];
    if (!date) continue;
    for (const hourDir of readdirSync(join(root, dateDir))) {
      const hour = HOUR_DIR.exec(hourDir)?.[1];
      if (!hour) continue;
      for (const file of readdirSync(join(root, dateDir, hourDir))) {
        if (!file.endsWith('.parquet')) continue;
        const path = join(target, dateDir, hourDir, file);
        files.push({ path, date, hour, bytes: statSync(join(exportDir, path)).size });
      }
    }
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** The glob the history views read: exactly the hive depth, so stray files are ignored. */
export function exportGlob(exportDir: string, target: string): string {
  return join(exportDir, target, 'date=*', 'hour=*', '*.parquet');
}
