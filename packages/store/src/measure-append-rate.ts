import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { SPAN_COLUMNS, type SpanRow } from '@governor/otlp';
import { createRowAppender } from './append-row.ts';
import { runMigrations } from './run-migrations.ts';

// The ceiling the ingest benchmark compares against: the DuckDB Appender alone, on one thread,
// writing already-normalized span rows into a fresh database with the real schema.

export interface AppendRateOptions {
  /** A fresh folder for the throwaway database (removed afterwards). */
  dir: string;
  /** Rows to append; reused cyclically up to `count`. */
  rows: readonly SpanRow[];
  count: number;
  /** Rows per flush (commit). */
  flushEvery: number;
}

export interface AppendRate {
  rows: number;
  elapsedMs: number;
  rowsPerS: number;
}

export async function measureAppendRate(options: AppendRateOptions): Promise<AppendRate> {
  if (options.rows.length === 0) throw new Error('measureAppendRate needs at least one row');
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true });
  const instance = await DuckDBInstance.create(join(options.dir, 'append-rate.duckdb'), {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    checkpoint_threshold: '16GB',
    threads: '2',
  });
  try {
    const connection = await instance.connect();
    await runMigrations(connection);
    const append = createRowAppender<SpanRow>(SPAN_COLUMNS);
    const appender = await connection.createAppender('span_store');
    const started = performance.now();
    for (let i = 0; i < options.count; i++) {
      append(appender, options.rows[i % options.rows.length]!);
      if ((i + 1) % options.flushEvery === 0) appender.flushSync();
    }
    appender.flushSync();
    const elapsedMs = performance.now() - started;
    appender.closeSync();
    connection.closeSync();
    return { rows: options.count, elapsedMs, rowsPerS: (options.count / elapsedMs) * 1000 };
  } finally {
    instance.closeSync();
    rmSync(options.dir, { recursive: true, force: true });
  }
}
