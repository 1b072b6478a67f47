import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { refreshHistoryViews, quote } from './refresh-history-views.ts';
import {
  RETENTION_RUNS_TABLES,
  RETENTION_TARGETS,
  type RetentionTarget,
  type RetentionTargetName,
} from './retention-targets.ts';

// Export, verify, delete — per table and slice of about 100,000 rows, each in one DuckDB
// transaction:
//   1. COPY the rows older than the cutoff to hive-partitioned Parquet in export/.staging/<run>/
//   2. check the COPY's row count and the files' own row count against the rows selected
//   3. DELETE the same rows (the transaction's snapshot: rows appended meanwhile are untouched)
//   4. record the run as `committed`, COMMIT
//   5. move the files into export/<table>/date=…/hour=…/ and mark the run `published`
// A failure before COMMIT rolls back and removes the staging folder, so nothing is lost or
// doubled. A crash between COMMIT and the move leaves `committed` runs that the next start
// publishes (recoverStagedExports).

const MINUTE_NS = 60_000_000_000n;
const STAGING = '.staging';

export interface RetentionPolicy {
  /** TTL per target in hours; 0 (or absent) keeps the table's rows forever. */
  ttlHours: Partial<Record<RetentionTargetName, number>>;
  /** Rows exported per transaction (default 100,000); a run exports as many slices as needed. */
  maxRowsPerSlice?: number;
  /**
   * Least pause between slices (default 100 ms). The pause is at least as long as the slice took,
   * so retention has DuckDB's threads at most half the time while it works through a backlog.
   */
  pauseBetweenSlicesMs?: number;
  /** Server clock in ns since the epoch (default: now); no row younger than its TTL by it is removed. */
  nowNs?: bigint;
  /**
   * Awaited before each slice: resolves when retention may take DuckDB's threads again. The server
   * waits there while the request rollup is behind, which ingest would otherwise answer with 503s.
   */
  beforeSlice?: () => Promise<void>;
  /** Aborted (at shutdown): no further slice starts; the one in progress finishes. */
  signal?: AbortSignal;
}

export interface RetentionTargetReport {
  target: RetentionTargetName;
  /** ok: rows exported and deleted (possibly none); skipped: no TTL or no table; failed: nothing changed. */
  status: 'ok' | 'skipped' | 'failed';
  watermarkNs: string | null;
  cutoffNs: string | null;
  rowsExported: number;
  rowsDeleted: number;
  bytesExported: number;
  files: string[];
  error?: string;
  durationMs: number;
}

export interface RetentionReport {
  runId: string;
  startedAt: string;
  targets: RetentionTargetReport[];
}

export async function runRetention(
  connection: DuckDBConnection,
  exportDir: string,
  policy: RetentionPolicy,
): Promise<RetentionReport> {
  const startedAt = new Date();
  const runId = `r${startedAt.toISOString().replace(/[-:.]/g, '').slice(0, 15)}z${randomBytes(3).toString('hex')}`;
  const targets: RetentionTargetReport[] = [];
  for (const target of RETENTION_TARGETS) {
    targets.push(
      await runTarget(connection, exportDir, runId, target, policy.ttlHours[target.name] ?? 0, policy),
    );
  }
  // Every run, not only those that wrote files: it also notices history an operator deleted.
  await refreshHistoryViews(connection, exportDir);
  return { runId, startedAt: startedAt.toISOString(), targets };
}

async function runTarget(
  connection: DuckDBConnection,
  exportDir: string,
  runId: string,
  target: RetentionTarget,
  ttlHours: number,
  policy: RetentionPolicy,
): Promise<RetentionTargetReport> {
  const started = performance.now();
  const report: RetentionTargetReport = {
    target: target.name,
    status: 'skipped',
    watermarkNs: null,
    cutoffNs: null,
    rowsExported: 0,
    rowsDeleted: 0,
    bytesExported: 0,
    files: [],
    durationMs: 0,
  };
  const finish = (status: RetentionTargetReport['status']) => ({
    ...report,
    status,
    durationMs: performance.now() - started,
  });
  if (!(ttlHours > 0) || !(await tableExists(connection, target.table))) return finish('skipped');

  const col = target.timeColumn;
  const watermark = await scalar(connection, `SELECT max(${col}) FROM ${target.table}`);
  if (watermark === null) return finish('ok');
  const watermarkNs = BigInt(watermark as bigint);
  // The TTL counts back from the newest event (a backfill of last year keeps its last TTL's
  // worth), but never from past the server clock: one event dated in the future must not make
  // the whole store look old.
  const nowNs = policy.nowNs ?? BigInt(Date.now()) * 1_000_000n;
  const cutoff = cutoffFor(watermarkNs < nowNs ? watermarkNs : nowNs, ttlHours);
  report.watermarkNs = String(watermarkNs);
  report.cutoffNs = String(cutoff);

  // Slices of about maxRowsPerSlice rows each (boundaries from approximate quantiles of event
  // time), one transaction per slice, each followed by a pause as long as it took: a long export
  // neither holds one huge transaction — which would keep the writer's checkpoints waiting — nor
  // takes DuckDB's threads from the request rollup for long. In the soak (4,200 spans/s with heavy
  // reads), one slice of 700k spans held the rollup 11 s behind, which ingest's back-pressure
  // answered with 503s.
  const maxRows = policy.maxRowsPerSlice ?? 100_000;
  const old = Number(
    await scalar(connection, `SELECT count(*) FROM ${target.table} WHERE ${col} < ${cutoff}`),
  );
  if (old === 0) return finish('ok');
  const bounds = await sliceBounds(connection, target, cutoff, Math.ceil(old / maxRows));
  let lo: bigint | null = null;
  for (let i = 0; i < bounds.length; i++) {
    const hi = bounds[i]!;
    const sliceId = `${runId}-${i}`;
    if (policy.signal?.aborted) break;
    await policy.beforeSlice?.();
    if (policy.signal?.aborted) break;
    const sliceStarted = performance.now();
    try {
      const slice = await exportSlice(connection, exportDir, sliceId, target, lo, hi, watermarkNs, cutoff);
      report.rowsExported += slice.rows;
      report.rowsDeleted += slice.rows;
      report.bytesExported += slice.bytes;
      report.files.push(...slice.files);
    } catch (error) {
      report.error = (error as Error).message;
      await connection
        .run(
          `INSERT INTO ${target.runsTable} (run_id, target, state, started_at, finished_at, watermark_ns, cutoff_ns, error, duration_ms)
           VALUES ($1, $2, 'failed', now()::TIMESTAMP, now()::TIMESTAMP, $3, $4, $5, $6)`,
          [sliceId, target.name, watermarkNs, cutoff, report.error, performance.now() - started],
        )
        .catch(() => undefined);
      return finish('failed');
    }
    lo = hi;
    if (i < bounds.length - 1) {
      const pauseMs = Math.max(policy.pauseBetweenSlicesMs ?? 100, performance.now() - sliceStarted);
      await pause(pauseMs, policy.signal);
    }
  }
  return finish('ok');
}

/** Resolves after `ms`, or as soon as `signal` aborts: a stop does not wait out a rest between slices. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Increasing upper bounds (exclusive) ending at the cutoff, splitting the old rows into about `slices` parts. */
async function sliceBounds(
  connection: DuckDBConnection,
  target: RetentionTarget,
  cutoff: bigint,
  slices: number,
): Promise<bigint[]> {
  if (slices <= 1) return [cutoff];
  const qs = Array.from({ length: slices - 1 }, (_, i) => ((i + 1) / slices).toFixed(6)).join(', ');
  const reader = await connection.runAndReadAll(
    `SELECT approx_quantile(${target.timeColumn}, [${qs}]) FROM ${target.table} WHERE ${target.timeColumn} < ${cutoff}`,
  );
  const points = ((reader.getRowsJS()[0]?.[0] as (bigint | number)[] | null) ?? []).map((v) => BigInt(v));
  const bounds: bigint[] = [];
  for (const p of points) if (p < cutoff && (bounds.length === 0 || p > bounds.at(-1)!)) bounds.push(p);
  bounds.push(cutoff);
  return bounds;
}

/**
 * One slice, rows with lo ≤ time < hi (no lower bound for the first): COPY to staging, verify,
 * DELETE, record, COMMIT, publish. Throws after rolling back and removing the staging folder.
 */
async function exportSlice(
  connection: DuckDBConnection,
  exportDir: string,
  sliceId: string,
  target: RetentionTarget,
  lo: bigint | null,
  hi: bigint,
  watermarkNs: bigint,
  cutoff: bigint,
): Promise<{ rows: number; bytes: number; files: string[] }> {
  const started = performance.now();
  const col = target.timeColumn;
  const where = lo === null ? `${col} < ${hi}` : `${col} >= ${lo} AND ${col} < ${hi}`;
  const stagingRoot = join(exportDir, STAGING, sliceId);
  const stagingDir = join(stagingRoot, target.name);
  let open = false;
  let result: { rows: number; bytes: number; files: string[] };
  try {
    await connection.run('BEGIN TRANSACTION');
    open = true;
    const selected = Number(await scalar(connection, `SELECT count(*) FROM ${target.table} WHERE ${where}`));
    if (selected === 0) {
      await connection.run('ROLLBACK');
      return { rows: 0, bytes: 0, files: [] };
    }
    mkdirSync(stagingRoot, { recursive: true });
    const ts = `make_timestamp(${col} // 1000)`;
    const copy = await connection.runAndReadAll(
      `COPY (SELECT *, strftime(${ts}, '%Y-%m-%d') AS date, strftime(${ts}, '%H') AS hour FROM ${target.table} WHERE ${where}) ` +
        `TO ${quote(stagingDir)} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (date, hour), FILENAME_PATTERN '${sliceId}_{uuid}', RETURN_FILES true)`,
    );
    const [copied, files] = (copy.getRowsJS()[0] ?? [0, []]) as [bigint | number, string[]];
    if (Number(copied) !== selected) throw new Error(`COPY wrote ${copied} rows, expected ${selected}`);
    const inFiles = Number(
      await scalar(connection, `SELECT count(*) FROM read_parquet([${files.map(quote).join(', ')}])`),
    );
    if (inFiles !== selected)
      throw new Error(`the exported files hold ${inFiles} rows, expected ${selected}`);
    const deleted = (await connection.run(`DELETE FROM ${target.table} WHERE ${where}`)).rowsChanged;
    if (deleted !== selected) throw new Error(`DELETE removed ${deleted} rows, expected ${selected}`);

    result = {
      rows: selected,
      bytes: files.reduce((n, f) => n + statSync(f).size, 0),
      files: files.map((f) => relative(stagingRoot, f)),
    };
    await connection.run(
      `INSERT INTO ${target.runsTable} (run_id, target, state, started_at, watermark_ns, cutoff_ns, rows_exported, rows_deleted, bytes_exported, files)
       VALUES ($1, $2, 'committed', now()::TIMESTAMP, $3, $4, $5, $6, $7, $8::JSON)`,
      [
        sliceId,
        target.name,
        watermarkNs,
        cutoff,
        selected,
        deleted,
        result.bytes,
        JSON.stringify(result.files),
      ],
    );
    await connection.run('COMMIT');
    open = false;
  } catch (error) {
    if (open) await connection.run('ROLLBACK').catch(() => undefined);
    removeQuietly(stagingRoot);
    throw error;
  }
  publishFiles(exportDir, stagingRoot, result.files);
  removeQuietly(stagingRoot);
  await connection.run(
    `UPDATE ${target.runsTable} SET state = 'published', finished_at = now()::TIMESTAMP, duration_ms = $3 WHERE run_id = $1 AND target = $2`,
    [sliceId, target.name, performance.now() - started],
  );
  return result;
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // Nothing was published from it; the next start clears export/.staging.
  }
}

/**
 * The cutoff: TTL before the newest event (at most the server clock), rounded down to a whole minute
 * (to the TTL when shorter). Each run exports what aged past the TTL since the last one: rounding to
 * whole hours released an hour of spans at every hour boundary (21.6M at 6,000 spans/s), an export
 * burst that competed with the request rollup for a quarter of an hour; slices of 100k rows write a
 * file each anyway.
 */
export function cutoffFor(watermarkNs: bigint, ttlHours: number): bigint {
  const ttlNs = BigInt(Math.round(ttlHours * 3_600_000_000_000));
  const granule = ttlNs < MINUTE_NS ? ttlNs : MINUTE_NS;
  const raw = watermarkNs - ttlNs;
  const floored = raw - (((raw % granule) + granule) % granule);
  return floored;
}

function publishFiles(exportDir: string, stagingRoot: string, files: readonly string[]): void {
  for (const file of files) {
    const from = join(stagingRoot, file);
    const to = join(exportDir, file);
    if (!existsSync(from)) continue;
    mkdirSync(dirname(to), { recursive: true });
    renameSync(from, to);
  }
}

/**
 * At start: publishes files of runs that committed but crashed before moving them, then removes
 * staging folders of runs that never committed (their rows are still in the tables).
 */
export async function recoverStagedExports(connection: DuckDBConnection, exportDir: string): Promise<number> {
  let recovered = 0;
  for (const runs of RETENTION_RUNS_TABLES) {
    const pending = await connection.runAndReadAll(
      `SELECT run_id, target, files::VARCHAR FROM ${runs} WHERE state = 'committed'`,
    );
    for (const [runId, target, files] of pending.getRowsJS() as [string, string, string][]) {
      publishFiles(exportDir, join(exportDir, STAGING, runId), JSON.parse(files) as string[]);
      await connection.run(
        `UPDATE ${runs} SET state = 'published', finished_at = now()::TIMESTAMP, error = 'published at restart' WHERE run_id = $1 AND target = $2`,
        [runId, target],
      );
      recovered++;
    }
  }
  const staging = join(exportDir, STAGING);
  if (existsSync(staging)) {
    for (const dir of readdirSync(staging)) rmSync(join(staging, dir), { recursive: true, force: true });
  }
  return recovered;
}

/** Whether `table` (a name in the main database, or `catalog.schema.name`) exists as a table. */
async function tableExists(connection: DuckDBConnection, table: string): Promise<boolean> {
  const parts = table.split('.');
  const name = parts.at(-1)!;
  const database = parts.length === 3 ? `'${parts[0]}'` : 'current_database()';
  return (
    Number(
      await scalar(
        connection,
        `SELECT count(*) FROM duckdb_tables() WHERE table_name = '${name}' AND database_name = ${database}`,
      ),
    ) > 0
  );
}

async function scalar(connection: DuckDBConnection, sql: string): Promise<unknown> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowsJS()[0]?.[0] ?? null;
}
