import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies numbered `NNNN_name.sql` files once each, in order, recording them in schema_migrations. */
export async function runMigrations(
  connection: DuckDBConnection,
  extraDirs: readonly string[] = [],
): Promise<string[]> {
  await connection.run(
    'CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)',
  );
  const appliedRows = await connection.runAndReadAll('SELECT name FROM schema_migrations');
  const applied = new Set(appliedRows.getRowsJS().map((r) => String(r[0])));
  const files = [MIGRATIONS_DIR, ...extraDirs]
    .flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
        .map((f) => ({ dir, f })),
    )
    .sort((a, b) => a.f.localeCompare(b.f));
  const newlyApplied: string[] = [];
  for (const { dir, f } of files) {
    if (applied.has(f)) continue;
    const sql = readFileSync(join(dir, f), 'utf8');
    await connection.run('BEGIN TRANSACTION');
    try {
      await connection.run(sql);
      await connection.run('INSERT INTO schema_migrations (name) VALUES ($1)', [f]);
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK');
      throw new Error(`migration ${f} failed: ${(error as Error).message}`, { cause: error });
    }
    newlyApplied.push(f);
  }
  return newlyApplied;
}
