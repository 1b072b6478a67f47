import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { METRIC_POINT_COLUMNS, type MetricPointRow, SPAN_COLUMNS, type SpanRow } from '@governor/otlp';
import { createRowAppender } from './append-row.ts';

// Bounded write queue with group commit. Each ingest request enqueues its rows and waits; the
// writer drains everything queued, appends it with the DuckDB Appender and flushes once, so many
// requests share one commit. Requests are acknowledged only after that flush returns. CHECKPOINT
// runs between flushes on a schedule (never inside an append), so no request waits behind an
// automatic checkpoint.

export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  constructor(
    readonly queuedRows: number,
    readonly retryAfterS: number,
  ) {
    super(`write queue is full (${queuedRows} rows waiting); retry after ${retryAfterS}s`);
  }
}

export class WriterClosedError extends Error {
  override readonly name = 'WriterClosedError';
  constructor() {
    super('Governor is shutting down and no longer accepts writes; retry against another instance or later');
  }
}

interface PendingBatch {
  spans: readonly SpanRow[];
  metrics: readonly MetricPointRow[];
  resolve: () => void;
  reject: (error: Error) => void;
}

export interface WriterStats {
  queuedRows: number;
  spansWritten: number;
  metricPointsWritten: number;
  flushes: number;
  lastFlushMs: number;
  maxFlushMs: number;
  lastFlushRows: number;
  checkpoints: number;
  lastCheckpointMs: number;
  maxCheckpointMs: number;
  rejectedQueueFull: number;
  failedFlushes: number;
}

export interface BatchWriterOptions {
  maxQueuedRows: number;
  checkpointIntervalMs: number;
  now?: () => number;
}

export interface BatchWriter {
  /** Resolves once the rows are committed; throws QueueFullError at once when the queue is full. */
  write(spans: readonly SpanRow[], metrics: readonly MetricPointRow[]): Promise<void>;
  stats(): WriterStats;
  /** Stops intake, commits what is queued, checkpoints. */
  close(): Promise<void>;
}

const appendSpan = createRowAppender<SpanRow>(SPAN_COLUMNS);
const appendMetricPoint = createRowAppender<MetricPointRow>(METRIC_POINT_COLUMNS);

export async function createBatchWriter(
  connection: DuckDBConnection,
  options: BatchWriterOptions,
): Promise<BatchWriter> {
  const now = options.now ?? (() => performance.now());
  let spanAppender: DuckDBAppender | null = null;
  let metricAppender: DuckDBAppender | null = null;
  let pending: PendingBatch[] = [];
  let queuedRows = 0;
  let draining: Promise<void> | null = null;
  let closed = false;
  let lastCheckpointAt = now();
  const stats: WriterStats = {
    queuedRows: 0,
    spansWritten: 0,
    metricPointsWritten: 0,
    flushes: 0,
    lastFlushMs: 0,
    maxFlushMs: 0,
    lastFlushRows: 0,
    checkpoints: 0,
    lastCheckpointMs: 0,
    maxCheckpointMs: 0,
    rejectedQueueFull: 0,
    failedFlushes: 0,
  };

  const openAppenders = async () => {
    spanAppender ??= await connection.createAppender('span_store');
    metricAppender ??= await connection.createAppender('metric_store');
  };
  const dropAppenders = () => {
    for (const a of [spanAppender, metricAppender]) {
      try {
        a?.closeSync();
      } catch {
        // The appender is already invalid after a failed flush; a fresh one replaces it.
      }
    }
    spanAppender = null;
    metricAppender = null;
  };

  const checkpoint = async () => {
    const started = now();
    await connection.run('CHECKPOINT');
    const ms = now() - started;
    stats.checkpoints++;
    stats.lastCheckpointMs = ms;
    stats.maxCheckpointMs = Math.max(stats.maxCheckpointMs, ms);
    lastCheckpointAt = now();
  };

  const flushOnce = async (batches: PendingBatch[]) => {
    await openAppenders();
    let spans = 0;
    let points = 0;
    const started = now();
    try {
      for (const batch of batches) {
        for (const row of batch.spans) appendSpan(spanAppender!, row);
        for (const row of batch.metrics) appendMetricPoint(metricAppender!, row);
        spans += batch.spans.length;
        points += batch.metrics.length;
      }
      if (spans > 0) spanAppender!.flushSync();
      if (points > 0) metricAppender!.flushSync();
    } catch (error) {
      stats.failedFlushes++;
      dropAppenders();
      const failure = new Error(`writing to DuckDB failed: ${(error as Error).message}`, { cause: error });
      for (const b of batches) b.reject(failure);
      return;
    }
    const ms = now() - started;
    stats.flushes++;
    stats.lastFlushMs = ms;
    stats.maxFlushMs = Math.max(stats.maxFlushMs, ms);
    stats.lastFlushRows = spans + points;
    stats.spansWritten += spans;
    stats.metricPointsWritten += points;
    for (const b of batches) b.resolve();
  };

  const drain = async () => {
    while (pending.length > 0) {
      const batches = pending;
      pending = [];
      const rows = batches.reduce((n, b) => n + b.spans.length + b.metrics.length, 0);
      await flushOnce(batches);
      queuedRows -= rows;
      stats.queuedRows = queuedRows;
      if (now() - lastCheckpointAt >= options.checkpointIntervalMs) {
        try {
          dropAppenders();
          await checkpoint();
        } catch {
          // A failed checkpoint leaves committed data in the WAL; the next one retries.
          lastCheckpointAt = now();
        }
      }
      // Let request handlers run (and enqueue) between flushes so batches grow under load.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };

  const kick = () => {
    if (draining) return;
    draining = drain().finally(() => {
      draining = null;
      if (pending.length > 0) kick();
    });
  };

  return {
    write(spans, metrics) {
      if (closed) return Promise.reject(new WriterClosedError());
      const rows = spans.length + metrics.length;
      if (rows === 0) return Promise.resolve();
      if (queuedRows > 0 && queuedRows + rows > options.maxQueuedRows) {
        stats.rejectedQueueFull++;
        // Rough time for the queue to drain at ~100k rows/s, at least one second.
        const retryAfterS = Math.max(1, Math.ceil(queuedRows / 100_000));
        return Promise.reject(new QueueFullError(queuedRows, retryAfterS));
      }
      queuedRows += rows;
      stats.queuedRows = queuedRows;
      return new Promise<void>((resolve, reject) => {
        pending.push({ spans, metrics, resolve, reject });
        kick();
      });
    },
    stats: () => ({ ...stats }),
    async close() {
      closed = true;
      while (draining) await draining;
      dropAppenders();
      await checkpoint();
    },
  };
}
