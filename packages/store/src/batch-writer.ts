import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import {
  type ColumnBatch,
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanRow,
  createColumnEncoder,
} from '@governor/otlp';
import { createColumnBatchAppender } from './append-column-batch.ts';
import { type DurationHistogram, createDurationHistogram, observeMs } from './duration-histogram.ts';
import { type IngestCpu, createIngestCpu } from './ingest-cpu/ingest-cpu.ts';
import { readThreadCpuUs } from './ingest-cpu/thread-cpu-clock.ts';
import {
  MOVE_SLICE_ROWS,
  STAGE_CATALOG,
  beginStageEpoch,
  copyStagedRowsAhead,
  moveStagedRows,
  readNextStageEpoch,
} from './ingest-stage.ts';

// Bounded write queue with group commit. Each ingest request enqueues its rows (laid out as columns
// by the decode workers: ColumnBatch) and waits; the writer takes what is queued as one group,
// appends it with the DuckDB Appender a DataChunk at a time (giving the event loop back between
// slices) and flushes once, so many requests share one commit. Requests are acknowledged only after
// that flush returns.
//
// CHECKPOINT: DuckDB blocks every commit to a database while it checkpoints that database — for
// seconds at high ingest rates — and a blocked flushSync blocks Node's event loop. So the writer
// checkpoints on its own schedule (by time and by rows written, never automatically inside a
// flush) and, while the main database checkpoints, commits into the ingest stage: a second
// database file whose commits are not blocked. After the checkpoint the staged rows are copied into
// the main tables while commits still go to the stage, then the writer switches back and the few
// rows staged last are moved (ingest-stage.ts). Acknowledged means committed to one of the two WALs.

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

/** Rows to write, laid out as columns (createColumnEncoder of SPAN_COLUMNS and METRIC_POINT_COLUMNS). */
export interface ColumnRows {
  spans: readonly ColumnBatch[];
  metrics: readonly ColumnBatch[];
}

interface PendingBatch extends ColumnRows {
  spanCount: number;
  pointCount: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export interface WriterStats {
  /** Rows accepted but not yet committed (the queue bounded by maxQueuedRows). */
  queuedRows: number;
  /** Spans committed to span_store, including staged spans once they have been moved there. */
  spansWritten: number;
  metricPointsWritten: number;
  /** Rows committed to the ingest stage during the current checkpoint, not yet in the main tables. */
  stagedRows: number;
  /** The spans among them (acknowledged, not yet in span_store). */
  stagedSpans: number;
  flushes: number;
  /** Wall time of every flush (the commit the acknowledgements wait for), summed. */
  flushMsTotal: number;
  lastFlushMs: number;
  maxFlushMs: number;
  lastFlushRows: number;
  checkpoints: number;
  lastCheckpointMs: number;
  maxCheckpointMs: number;
  failedCheckpoints: number;
  rejectedQueueFull: number;
  failedFlushes: number;
  /**
   * Group commits by duration: what every acknowledgement of the group waited for, and — the
   * Appender's flush being synchronous — how long the event loop was held, request intake included.
   */
  flushSeconds: DurationHistogram;
  /** Checkpoints of the main database by duration (the request rollup waits for each). */
  checkpointSeconds: DurationHistogram;
}

/** Bucket bounds of WriterStats.flushSeconds (s). */
export const FLUSH_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;
/** Bucket bounds of WriterStats.checkpointSeconds (s). */
export const CHECKPOINT_BUCKETS_S = [0.25, 0.5, 1, 2.5, 5, 10, 20, 40] as const;

/** A writer's counters before its first write (the ClickHouse store keeps the same ones). */
export function emptyWriterStats(): WriterStats {
  return {
    queuedRows: 0,
    spansWritten: 0,
    metricPointsWritten: 0,
    stagedRows: 0,
    stagedSpans: 0,
    flushes: 0,
    flushMsTotal: 0,
    lastFlushMs: 0,
    maxFlushMs: 0,
    lastFlushRows: 0,
    checkpoints: 0,
    lastCheckpointMs: 0,
    maxCheckpointMs: 0,
    failedCheckpoints: 0,
    rejectedQueueFull: 0,
    failedFlushes: 0,
    flushSeconds: createDurationHistogram(FLUSH_BUCKETS_S),
    checkpointSeconds: createDurationHistogram(CHECKPOINT_BUCKETS_S),
  };
}

export interface BatchWriterOptions {
  maxQueuedRows: number;
  /** Checkpoint at least this often while rows are being written. */
  checkpointIntervalMs: number;
  /** …and after this many rows, whichever comes first (bounds WAL size and replay time). */
  checkpointRows?: number;
  /** Name of the main database (what `CHECKPOINT <name>` takes). */
  mainCatalog: string;
  now?: () => number;
  /** Where the writer charges its CPU (stages append, commit, checkpoint). */
  cpu?: IngestCpu;
}

export interface BatchWriter {
  /** Resolves once the rows are committed; throws QueueFullError at once when the queue is full. */
  writeColumns(rows: ColumnRows): Promise<void>;
  /** writeColumns of rows laid out here, on the calling thread. */
  write(spans: readonly SpanRow[], metrics: readonly MetricPointRow[]): Promise<void>;
  stats(): WriterStats;
  /** Runs a checkpoint cycle now (after the current one, if any); resolves when the stage is empty again. */
  checkpoint(): Promise<void>;
  /**
   * Resolves once every row acknowledged so far is in the main tables: at once when none is staged,
   * else when the checkpoint cycle in progress has moved them (or failed to: the next cycle moves
   * them first). Only that cycle: rows staged by a later one were acknowledged after the call, and
   * under steady ingest cycles follow each other back to back. Readers that key on span_store's
   * rowid (the request rollup) wait for this.
   */
  whenMoved(): Promise<void>;
  /**
   * Runs `fn` while no checkpoint of the main database runs. A checkpoint compacts row groups that
   * lost rows (retention's deletes) and renumbers span_store's rowids — even under an open
   * transaction — so a reader that finds rows by rowid across several statements (the request
   * rollup: plan, then apply) holds this. A checkpoint waits for the holders running; holders
   * arriving while one waits or runs wait for it to end.
   */
  holdRowids<T>(fn: () => Promise<T>): Promise<T>;
  /** Stops intake, commits what is queued, checkpoints. */
  close(): Promise<void>;
}

/** Rows appended between two yields to the event loop (≈2 ms of work as DataChunks). */
const SLICE_ROWS = 2_000;
/**
 * Upper bound on one group: its flush is a synchronous commit that holds the event loop, ≈4 ms plus
 * ≈7.5 µs per span row on an idle 2-core machine and two to three times that under load (DuckDB
 * 1.5 plans an INSERT for every flush, then writes the WAL and fsyncs). 20,000-row groups, formed
 * after any stall, held the loop 150–300 ms, and every request waiting to be read waited with it.
 */
const MAX_GROUP_ROWS = 4_000;
/**
 * After a checkpoint, passes that copy staged rows to the main tables while commits still go to the
 * stage, until a pass copies no more than COPY_AHEAD_ENOUGH_ROWS. A pass copies what was staged
 * during the one before, so passes shrink while copying runs at least twice as fast as the fleet
 * sends; one that does not halve ends the phase, and so does the bound.
 */
const MAX_COPY_AHEAD_PASSES = 4;
const COPY_AHEAD_ENOUGH_ROWS = MOVE_SLICE_ROWS * 2;

const encodeSpans = createColumnEncoder<SpanRow>(SPAN_COLUMNS);
const encodeMetricPoints = createColumnEncoder<MetricPointRow>(METRIC_POINT_COLUMNS);
const appendSpans = createColumnBatchAppender(SPAN_COLUMNS);
const appendMetricPoints = createColumnBatchAppender(METRIC_POINT_COLUMNS);

type Target = 'main' | 'stage';

interface Appenders {
  spans: DuckDBAppender | null;
  metrics: DuckDBAppender | null;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `connection` runs the appenders; `maintenance` runs CHECKPOINT and the stage moves, so those
 * never wait for (or hold up) an append on the same connection.
 */
export async function createBatchWriter(
  connection: DuckDBConnection,
  maintenance: DuckDBConnection,
  options: BatchWriterOptions,
): Promise<BatchWriter> {
  const now = options.now ?? (() => performance.now());
  // A checkpoint costs about the same per row whatever its size (≈1.5 s per 100,000 spans, 3–6 s
  // per 250,000 on an idle 2-core machine, retention's deletes included), but the request rollup
  // waits for each one: smaller ones keep its lag, and the refusals past ingest.max_rollup_lag, down.
  const checkpointRows = options.checkpointRows ?? 100_000;
  const cpu = options.cpu ?? createIngestCpu();
  const appenders: Record<Target, Appenders> = {
    main: { spans: null, metrics: null },
    stage: { spans: null, metrics: null },
  };
  let target: Target = 'main';
  let pending: PendingBatch[] = [];
  let queuedRows = 0;
  let draining: Promise<void> | null = null;
  /** Resolves when the group being appended is flushed (or failed). */
  let currentGroup: Promise<void> | null = null;
  let cycle: Promise<void> | null = null;
  let closed = false;
  let lastCheckpointAt = now();
  let rowsSinceCheckpoint = 0;
  let nextEpoch = await readNextStageEpoch(maintenance);
  const stats = emptyWriterStats();
  let stagedSpans = 0;
  let stagedPoints = 0;
  // holdRowids: running holders, and the checkpoint that waits for them or runs (null when none).
  let rowidHolders = 0;
  let holdersDone: (() => void) | null = null;
  let checkpointing: Promise<void> | null = null;

  /**
   * Waits until no holder of span_store's rowids runs and admits none until the returned release
   * is called (after the checkpoint).
   */
  const excludeRowidHolders = async (): Promise<() => void> => {
    while (checkpointing) await checkpointing;
    let release!: () => void;
    checkpointing = new Promise<void>((resolve) => {
      release = () => {
        checkpointing = null;
        resolve();
      };
    });
    if (rowidHolders > 0) {
      await new Promise<void>((resolve) => {
        holdersDone = resolve;
      });
    }
    return release;
  };
  const checkpointMain = () => maintenance.run(`CHECKPOINT "${options.mainCatalog.replaceAll('"', '""')}"`);

  const openAppenders = async (t: Target): Promise<Required<{ [K in keyof Appenders]: DuckDBAppender }>> => {
    const set = appenders[t];
    const catalog = t === 'stage' ? STAGE_CATALOG : undefined;
    set.spans ??= await connection.createAppender('span_store', 'main', catalog);
    set.metrics ??= await connection.createAppender('metric_store', 'main', catalog);
    return { spans: set.spans, metrics: set.metrics };
  };
  /** Closes a target's appenders; `discard` drops rows appended but not flushed (a failed group). */
  const closeAppenders = (t: Target, discard = false) => {
    const set = appenders[t];
    for (const a of [set.spans, set.metrics]) {
      try {
        if (discard) a?.clear();
        a?.closeSync();
      } catch {
        // Invalid after a failed flush; a fresh one replaces it.
      }
    }
    set.spans = null;
    set.metrics = null;
  };

  const writeGroup = async (batches: PendingBatch[]) => {
    const groupTarget = target;
    let spans = 0;
    let points = 0;
    try {
      const a = await openAppenders(groupTarget);
      let sliceRows = 0;
      let sliceStartedUs = readThreadCpuUs();
      const slice = async (rows: number) => {
        sliceRows += rows;
        if (sliceRows < SLICE_ROWS) return;
        sliceRows = 0;
        cpu.add('append', readThreadCpuUs() - sliceStartedUs, true);
        await yieldToEventLoop();
        sliceStartedUs = readThreadCpuUs();
      };
      for (const batch of batches) {
        for (const chunk of batch.spans) {
          appendSpans(a.spans, chunk);
          await slice(chunk.rows);
        }
        for (const chunk of batch.metrics) {
          appendMetricPoints(a.metrics, chunk);
          await slice(chunk.rows);
        }
        spans += batch.spanCount;
        points += batch.pointCount;
      }
      cpu.add('append', readThreadCpuUs() - sliceStartedUs, true);
      const flushStarted = now();
      cpu.measure('commit', () => {
        if (spans > 0) a.spans.flushSync();
        if (points > 0) a.metrics.flushSync();
      });
      const flushMs = now() - flushStarted;
      stats.lastFlushMs = flushMs;
      stats.flushMsTotal += flushMs;
      stats.maxFlushMs = Math.max(stats.maxFlushMs, flushMs);
      observeMs(stats.flushSeconds, flushMs);
    } catch (error) {
      stats.failedFlushes++;
      // Nothing of a rejected group is committed, so the client's retry cannot duplicate it.
      closeAppenders(groupTarget, true);
      const failure = new Error(`writing to DuckDB failed: ${(error as Error).message}`, { cause: error });
      for (const b of batches) b.reject(failure);
      return;
    }
    stats.flushes++;
    stats.lastFlushRows = spans + points;
    rowsSinceCheckpoint += spans + points;
    if (groupTarget === 'main') {
      stats.spansWritten += spans;
      stats.metricPointsWritten += points;
    } else {
      stagedSpans += spans;
      stagedPoints += points;
      stats.stagedRows = stagedSpans + stagedPoints;
      stats.stagedSpans = stagedSpans;
    }
    for (const b of batches) b.resolve();
  };

  const takeGroup = (): PendingBatch[] => {
    let rows = 0;
    let i = 0;
    while (i < pending.length && (i === 0 || rows < MAX_GROUP_ROWS)) {
      const b = pending[i]!;
      rows += b.spanCount + b.pointCount;
      i++;
    }
    const group = pending.slice(0, i);
    pending = pending.slice(i);
    return group;
  };

  const checkpointDue = () =>
    rowsSinceCheckpoint > 0 &&
    (rowsSinceCheckpoint >= checkpointRows || now() - lastCheckpointAt >= options.checkpointIntervalMs);

  /**
   * Checkpoints the main database while commits go to the stage, then moves the staged rows into
   * the main tables. Switches happen between groups: `target` is read when a group starts, and the
   * group in progress is awaited before the database it wrote to is checkpointed or moved from.
   */
  const moveStaged = async () => {
    await cpu.measureBackground('checkpoint', () => moveStagedRows(maintenance));
    stats.spansWritten += stagedSpans;
    stats.metricPointsWritten += stagedPoints;
    stagedSpans = 0;
    stagedPoints = 0;
    stats.stagedRows = 0;
    stats.stagedSpans = 0;
  };

  const runCycle = async () => {
    // A failed move leaves rows in the stage: move them before staging more (target is 'main').
    if (stats.stagedRows > 0) await moveStaged();
    // Holders of span_store's rowids finish first, while commits still go to the main tables.
    const releaseRowids = await excludeRowidHolders();
    const epoch = nextEpoch++;
    try {
      await beginStageEpoch(maintenance, epoch);
    } catch (error) {
      releaseRowids();
      throw error;
    }
    target = 'stage';
    await currentGroup;
    closeAppenders('main');
    const started = now();
    rowsSinceCheckpoint = 0;
    try {
      await cpu.measureBackground('checkpoint', checkpointMain);
      const ms = now() - started;
      stats.checkpoints++;
      stats.lastCheckpointMs = ms;
      observeMs(stats.checkpointSeconds, ms);
      stats.maxCheckpointMs = Math.max(stats.maxCheckpointMs, ms);
    } catch {
      // Committed data stays safe in the WAL; the next cycle retries.
      stats.failedCheckpoints++;
    } finally {
      releaseRowids();
    }
    lastCheckpointAt = now();
    // Copy the staged rows while group commits still go to the stage: a slice's commit to the main
    // database holds the main tables' append, and a group commit to them (synchronous, on the event
    // loop) would wait for it. The last few rows move after the switch.
    try {
      let before = Number.POSITIVE_INFINITY;
      for (let pass = 0; pass < MAX_COPY_AHEAD_PASSES; pass++) {
        const copied = await cpu.measureBackground('checkpoint', () => copyStagedRowsAhead(maintenance));
        if (copied <= COPY_AHEAD_ENOUGH_ROWS || copied >= before / 2) break;
        before = copied;
      }
    } catch {
      // A failed slice (a full disk) copied nothing; the switch back below still happens, and the
      // move resumes after the last recorded slice (or the next cycle does).
    }
    target = 'main';
    await currentGroup;
    closeAppenders('stage');
    await moveStaged();
  };

  const startCycle = (): Promise<void> => {
    cycle ??= runCycle()
      .catch(() => {
        stats.failedCheckpoints++;
        target = 'main';
      })
      .finally(() => {
        cycle = null;
      });
    return cycle;
  };

  const drain = async () => {
    while (pending.length > 0) {
      if (cycle === null && checkpointDue()) void startCycle();
      const batches = takeGroup();
      const rows = batches.reduce((n, b) => n + b.spanCount + b.pointCount, 0);
      let done!: () => void;
      currentGroup = new Promise<void>((resolve) => {
        done = resolve;
      });
      try {
        await writeGroup(batches);
      } finally {
        currentGroup = null;
        done();
        queuedRows -= rows;
        stats.queuedRows = queuedRows;
      }
      // Let request handlers run (and enqueue) between groups so groups grow under load.
      await yieldToEventLoop();
    }
  };

  const kick = () => {
    if (draining) return;
    draining = drain().finally(() => {
      draining = null;
      if (pending.length > 0) kick();
    });
  };

  // An idle writer still checkpoints what it wrote, on time.
  const timer = setInterval(
    () => {
      if (!closed && cycle === null && checkpointDue()) void startCycle();
    },
    Math.max(50, Math.min(1000, options.checkpointIntervalMs / 4)),
  );
  timer.unref();

  const writeColumns = (batch: ColumnRows): Promise<void> => {
    if (closed) return Promise.reject(new WriterClosedError());
    const spanCount = batch.spans.reduce((n, b) => n + b.rows, 0);
    const pointCount = batch.metrics.reduce((n, b) => n + b.rows, 0);
    const rows = spanCount + pointCount;
    if (rows === 0) return Promise.resolve();
    if (queuedRows > 0 && queuedRows + rows > options.maxQueuedRows) {
      stats.rejectedQueueFull++;
      // Rough time for the queue to drain at ~50k rows/s, at least one second.
      const retryAfterS = Math.max(1, Math.ceil(queuedRows / 50_000));
      return Promise.reject(new QueueFullError(queuedRows, retryAfterS));
    }
    queuedRows += rows;
    stats.queuedRows = queuedRows;
    return new Promise<void>((resolve, reject) => {
      pending.push({
        spans: batch.spans,
        metrics: batch.metrics,
        spanCount,
        pointCount,
        resolve,
        reject,
      });
      kick();
    });
  };

  return {
    writeColumns,
    write(spans, metrics) {
      let rows: ColumnRows;
      try {
        rows = { spans: encodeSpans(spans), metrics: encodeMetricPoints(metrics) };
      } catch (error) {
        return Promise.reject(error);
      }
      return writeColumns(rows);
    },
    stats: () => ({
      ...stats,
      flushSeconds: { ...stats.flushSeconds, counts: [...stats.flushSeconds.counts] },
      checkpointSeconds: { ...stats.checkpointSeconds, counts: [...stats.checkpointSeconds.counts] },
    }),
    async checkpoint() {
      while (cycle) await cycle;
      await startCycle();
    },
    async whenMoved() {
      if (stats.stagedRows > 0 && cycle) await cycle;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      while (draining || cycle) {
        await draining;
        await cycle;
      }
      closeAppenders('main');
      closeAppenders('stage');
      await moveStaged();
      const releaseRowids = await excludeRowidHolders();
      try {
        await checkpointMain();
      } finally {
        releaseRowids();
      }
    },
    async holdRowids(fn) {
      while (checkpointing) await checkpointing;
      rowidHolders++;
      try {
        return await fn();
      } finally {
        if (--rowidHolders === 0 && holdersDone) {
          const done = holdersDone;
          holdersDone = null;
          done();
        }
      }
    },
  };
}
