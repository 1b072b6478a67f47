import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { SPAN_COLUMNS, type SpanRow } from '@governor/otlp';
import { createChunkAppender } from './append-chunk.ts';
import { createRowAppender } from './append-row.ts';
import { readThreadCpuUs } from './ingest-cpu/thread-cpu-clock.ts';
import { runMigrations } from './run-migrations.ts';

// The ceiling the ingest benchmark compares against: the DuckDB Appender alone, on one thread,
// writing already-normalized span rows into a fresh database with the real schema — a row at a
// time (one call per value) or a DataChunk at a time (appendDataChunk).

export interface AppendRateOptions {
  /** A fresh folder for the throwaway database (removed afterwards). */
  dir: string;
  /** Rows to append; reused cyclically up to `count`. */
  rows: readonly SpanRow[];
  count: number;
  /** Rows per flush (commit). */
  flushEvery: number;
  /** `row` (default): appendVarchar/appendBigInt… per value; `chunk`: appendDataChunk per 2,048 rows. */
  method?: 'row' | 'chunk';
}

export interface AppendRate {
  rows: number;
  elapsedMs: number;
  rowsPerS: number;
  /** CPU of the appending thread per row (the figure other processes' load moves least). */
  cpuUsPerRow: number;
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
    const appender = await connection.createAppender('span_store');
    const started = performance.now();
    const cpuStarted = readThreadCpuUs();
    if (options.method === 'chunk') {
      // The same sequence of rows as the row method, laid out once so slicing costs nothing.
      const all = Array.from({ length: options.count }, (_, i) => options.rows[i % options.rows.length]!);
      const append = createChunkAppender<SpanRow>(SPAN_COLUMNS);
      for (let from = 0; from < options.count; from += options.flushEvery) {
        append(appender, all, from, Math.min(options.count, from + options.flushEvery));
        appender.flushSync();
      }
    } else {
      const append = createRowAppender<SpanRow>(SPAN_COLUMNS);
      for (let i = 0; i < options.count; i++) {
        append(appender, options.rows[i % options.rows.length]!);
        if ((i + 1) % options.flushEvery === 0) appender.flushSync();
      }
      appender.flushSync();
    }
    const cpuUs = readThreadCpuUs() - cpuStarted;
    const elapsedMs = performance.now() - started;
    appender.closeSync();
    connection.closeSync();
    return {
      rows: options.count,
      elapsedMs,
      rowsPerS: (options.count / elapsedMs) * 1000,
      cpuUsPerRow: cpuUs / options.count,
    };
  } finally {
    instance.closeSync();
    rmSync(options.dir, { recursive: true, force: true });
  }
}
