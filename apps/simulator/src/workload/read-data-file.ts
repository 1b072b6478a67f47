import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The workload traces vendored in the repository (`data/workloads/`, see its README and NOTICE). */
export const DEFAULT_DATA_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../data/workloads',
);

/** `--data-dir`, then `GOVERNOR_DATA_DIR`, then the repository's own `data/workloads/`. */
export function resolveDataDir(explicit?: string): string {
  if (explicit) return resolve(explicit);
  const fromEnv = process.env.GOVERNOR_DATA_DIR;
  if (fromEnv) return resolve(fromEnv);
  return DEFAULT_DATA_DIR;
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
