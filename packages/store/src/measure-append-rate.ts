import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { COLUMN_BATCH_MAX_ROWS, SPAN_COLUMNS, type SpanRow, createColumnEncoder } from '@governor/otlp';
import { createColumnBatchAppender } from './append-column-batch.ts';
import { createRowAppender } from './append-row.ts';
import { readThreadCpuUs } from './ingest-cpu/thread-cpu-clock.ts';
import { runMigrations } from './run-migrations.ts';

// The ceiling the ingest benchmark compares against: the DuckDB Appender alone, on one thread,
// writing already-normalized span rows into a fresh database with the real schema — a row at a
// time (one call per value) or a DataChunk at a time (appendDataChunk of the rows laid out as
// columns, the layout included: the server's own path, done on one thread).

export interface AppendRateOptions {
  /** A fresh folder for the throwaway database (removed afterwards). */
  dir: string;
  /** Rows to append; reused cyclically up to `count`. */
  rows: readonly SpanRow[];
  count: number;
  /** Rows per flush (commit). */
  flushEvery: number;
  /** `row` (default): appendVarchar/appendBigInt… per value; `chunk`: createColumnEncoder + appendDataChunk. */
  method?: 'row' | 'chunk';
}

export interface AppendRate {
  /** Rows in the table afterwards. */
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
      const encode = createColumnEncoder<SpanRow>(SPAN_COLUMNS);
      const append = createColumnBatchAppender(SPAN_COLUMNS);
      // The same sequence of rows as the row method, a DataChunk's worth at a time.
      const chunkRows: SpanRow[] = [];
      let sinceFlush = 0;
      for (let i = 0; i < options.count; i++) {
        chunkRows.push(options.rows[i % options.rows.length]!);
        const last = i === options.count - 1;
        if (chunkRows.length < COLUMN_BATCH_MAX_ROWS && !last) continue;
        for (const batch of encode(chunkRows)) append(appender, batch);
        sinceFlush += chunkRows.length;
        chunkRows.length = 0;
        if (sinceFlush >= options.flushEvery || last) {
          appender.flushSync();
          sinceFlush = 0;
        }
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
    // What the table holds, not what was asked for: a path that lost rows would look fast.
    const reader = await connection.runAndReadAll('SELECT count(*) FROM span_store');
    const rows = Number(reader.getRowsJS()[0]![0]);
    connection.closeSync();
    return {
      rows,
      elapsedMs,
      rowsPerS: (rows / elapsedMs) * 1000,
      cpuUsPerRow: cpuUs / rows,
    };
  } finally {
    instance.closeSync();
    rmSync(options.dir, { recursive: true, force: true });
  }
}
