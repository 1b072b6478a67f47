import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shared data folder sits beside the repository (`../shared/data` from the repo root), so it is
 * never copied in. `GOVERNOR_DATA_DIR` or `--data-dir` override it.
 */
export function resolveDataDir(explicit?: string): string {
  if (explicit) return resolve(explicit);
  const fromEnv = process.env.GOVERNOR_DATA_DIR;
  if (fromEnv) return resolve(fromEnv);
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
  return join(repoRoot, '..', 'shared', 'data');
}

export function readDataFile(dataDir: string, fileName: string): string {
  const path = join(dataDir, fileName);
  if (!existsSync(path)) {
    throw new Error(
      `workload data file not found: ${path} (set GOVERNOR_DATA_DIR or --data-dir to the folder holding ${fileName})`,
    );
  }
  return readFileSync(path, 'utf8');
}

/** Minimal CSV reader for the trace files: no quoted fields occur in them, so a split suffices. */
export function parseCsv(text: string): { header: string[]; rows: string[][] } {
  const lines = text.split(/\r?\n/).filter((line) => line.length > 0);
  const header = (lines[0] ?? '').split(',');
  const rows = lines.slice(1).map((line) => line.split(','));
  return { header, rows };
}

export function getColumnIndex(header: string[], name: string, fileName: string): number {
  const index = header.indexOf(name);
  if (index < 0) throw new Error(`${fileName}: missing column "${name}" (found ${header.join(', ')})`);
  return index;
}
