import { readFileSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';

// The ingest stage (see ingest-stage.sql): attached at start, recovered, recreated; emptied into
// the main tables after every checkpoint of the main database.

const sql = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
const SETUP_SQL = sql('./ingest-stage.sql');
const MOVES_SQL = sql('./ingest-stage-moves.sql');
const MOVE_SQL = sql('./move-staged-rows.sql');
const EMPTY_SQL = sql('./empty-stage.sql');

export const STAGE_CATALOG = 'stage';
export const STAGE_FILE = 'ingest-stage.duckdb';

const STAGE_TABLES = ['span_store', 'metric_store', 'ingest_stage_epoch'] as const;

/** The statements of a script, one per `;` at a line end, comments dropped. */
export function splitStatements(script: string): string[] {
  return script
    .split(/;\s*\n/)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter((s) => s.length > 0);
}

/**
 * Attaches the stage database (a file next to the main one, or in memory), moves what a crash
 * left in it into the main tables and recreates its tables with the main tables' columns.
 * Must run before `enable_external_access=false`, which forbids ATTACH.
 *
 * The stage holds rows only when all three of its tables exist: the rebuild runs in one
 * transaction, and a stage left half-built by an older version's autocommitted rebuild was
 * already empty (the rebuild follows the move), so it is simply rebuilt.
 */
export async function attachIngestStage(connection: DuckDBConnection, path: string): Promise<void> {
  await connection.run(`ATTACH '${path.replaceAll("'", "''")}' AS ${STAGE_CATALOG}`);
  await connection.run(MOVES_SQL);
  const tables = await connection.runAndReadAll(
    `SELECT count(*)::INTEGER FROM duckdb_tables() WHERE database_name = '${STAGE_CATALOG}' AND table_name IN (${STAGE_TABLES.map((t) => `'${t}'`).join(', ')})`,
  );
  if (Number(tables.getRowsJS()[0]?.[0] ?? 0) === STAGE_TABLES.length) await moveStagedRows(connection);
  await runStatements(connection, splitStatements(SETUP_SQL));
}

/** The next free epoch number for a staging cycle. */
export async function readNextStageEpoch(connection: DuckDBConnection): Promise<number> {
  const reader = await connection.runAndReadAll(
    'SELECT coalesce(max(epoch), 0)::BIGINT + 1 FROM ingest_stage_moves',
  );
  return Number(reader.getRowsJS()[0]?.[0] ?? 1);
}

/** Marks the start of a staging cycle; must commit before the first staged row. */
export async function beginStageEpoch(connection: DuckDBConnection, epoch: number): Promise<void> {
  await connection.run(`INSERT INTO ${STAGE_CATALOG}.main.ingest_stage_epoch VALUES (${Math.trunc(epoch)})`);
}

export interface MovedRows {
  spans: number;
  metricPoints: number;
}

/**
 * Staged rows copied per transaction. A slice's commit writes its rows to the main file's WAL, and
 * the writer's next group commit (synchronous, on the event loop) waits for it: about one group
 * commit's worth (two requests of 500 spans) keeps that wait as short as a commit of its own. At
 * 5,000, in a 4-minute hold at 14,800 spans/s, flushes waited up to 170 ms on a slice's commit, the
 * largest stalls left once the rollup had its own file (docs/operations.md).
 */
export const MOVE_SLICE_ROWS = 1_000;
/**
 * Staged rows copied per transaction while the writer still commits to the stage: nothing waits for
 * these commits, so fewer, larger ones. Beside an unthrottled writer (batch-writer.int.test.ts, this
 * 2-core machine) a pass copied ~24,000 rows/s in 1,000-row slices and 50,000–60,000 in 10,000-row
 * ones, enough to shrink pass by pass at the soak's 16,000–19,000 spans/s.
 */
const COPY_AHEAD_SLICE_ROWS = 10_000;

const MOVED_TABLES = ['span_store', 'metric_store'] as const;

/**
 * Copies the staged rows into the main tables (unless their epoch is already marked moved: a crash
 * between copy and delete), then empties and checkpoints the stage. The caller makes sure nothing
 * writes to the stage meanwhile.
 *
 * Each table is copied in slices of MOVE_SLICE_ROWS rowids, one transaction each, recording how far
 * it got; a move interrupted part way resumes after the last recorded slice. One transaction for
 * all rows held the main tables' append for the whole copy (about a second per 100,000 spans), and
 * every group commit of the ingest writer — a synchronous call on the event loop — waited for it.
 */
export async function moveStagedRows(connection: DuckDBConnection): Promise<MovedRows> {
  const reader = await connection.runAndReadAll(`SELECT
      (SELECT count(*) FROM ${STAGE_CATALOG}.main.span_store)::BIGINT,
      (SELECT count(*) FROM ${STAGE_CATALOG}.main.metric_store)::BIGINT,
      (SELECT count(*) FROM ${STAGE_CATALOG}.main.ingest_stage_epoch)::BIGINT,
      (SELECT count(*) FROM ingest_stage_moves m JOIN ${STAGE_CATALOG}.main.ingest_stage_epoch e ON m.epoch = e.epoch
        WHERE m.table_name IS NULL)::BIGINT,
      (SELECT max(epoch) FROM ${STAGE_CATALOG}.main.ingest_stage_epoch)::BIGINT`);
  const [spans, metricPoints, epochs, alreadyMoved, epoch] = (reader.getRowsJS()[0] ?? []).map((v) =>
    Number(v ?? 0),
  ) as [number, number, number, number, number];
  if (spans + metricPoints + epochs === 0) return { spans: 0, metricPoints: 0 };
  const moved = spans + metricPoints > 0 && alreadyMoved === 0;
  if (moved) {
    for (const table of MOVED_TABLES) await moveTableInSlices(connection, table, epoch, MOVE_SLICE_ROWS);
    await runScript(connection, MOVE_SQL);
  }
  await runScript(connection, EMPTY_SQL);
  if (spans + metricPoints > 0) await connection.run(`CHECKPOINT ${STAGE_CATALOG}`);
  return moved ? { spans, metricPoints } : { spans: 0, metricPoints: 0 };
}

/**
 * Copies the rows staged so far into the main tables, slice by slice as `moveStagedRows` does,
 * while the writer may still commit to the stage: rows committed after a table's copy starts are
 * left for the next call or for `moveStagedRows`, which resumes after the last recorded slice. So
 * the slices' commits to the main database do not contend with the writer's group commits, which
 * go to the stage meanwhile. Returns the rows copied.
 */
export async function copyStagedRowsAhead(connection: DuckDBConnection): Promise<number> {
  const reader = await connection.runAndReadAll(
    `SELECT max(epoch)::BIGINT FROM ${STAGE_CATALOG}.main.ingest_stage_epoch`,
  );
  const epoch = reader.getRowsJS()[0]?.[0];
  if (epoch === null || epoch === undefined) return 0;
  let copied = 0;
  for (const table of MOVED_TABLES) {
    copied += await moveTableInSlices(connection, table, Number(epoch), COPY_AHEAD_SLICE_ROWS);
  }
  return copied;
}

/**
 * Copies `table`'s staged rows after the last slice recorded for `epoch` through the last row
 * staged when it starts, a slice per transaction. Returns the rows copied.
 */
async function moveTableInSlices(
  connection: DuckDBConnection,
  table: (typeof MOVED_TABLES)[number],
  epoch: number,
  sliceRows: number,
): Promise<number> {
  const staged = `${STAGE_CATALOG}.main.${table}`;
  // Rowids need not start at 0 (rows deleted from the stage before may keep theirs): from the first.
  const reader = await connection.runAndReadAll(`SELECT
      (SELECT min(rowid) FROM ${staged})::BIGINT,
      (SELECT max(rowid) FROM ${staged})::BIGINT,
      (SELECT max(through_rowid) FROM ingest_stage_moves WHERE epoch = ${epoch} AND table_name = '${table}')::BIGINT`);
  const [first, last, done] = reader.getRowsJS()[0] ?? [];
  if (first === null || first === undefined || last === null || last === undefined) return 0;
  const lastRowid = Number(last);
  const start =
    done === null || done === undefined ? Number(first) : Math.max(Number(first), Number(done) + 1);
  let copied = 0;
  for (let from = start; from <= lastRowid; ) {
    const through = Math.min(from + sliceRows - 1, lastRowid);
    await runStatements(connection, [
      'BEGIN TRANSACTION',
      `INSERT INTO ${table} BY NAME SELECT * FROM ${staged} WHERE rowid BETWEEN ${from} AND ${through}`,
      `INSERT INTO ingest_stage_moves (epoch, table_name, through_rowid) VALUES (${epoch}, '${table}', ${through})`,
      'COMMIT',
    ]);
    copied += through - from + 1;
    from = through + 1;
  }
  return copied;
}

async function runScript(connection: DuckDBConnection, script: string): Promise<void> {
  await runStatements(connection, [script]);
}

async function runStatements(connection: DuckDBConnection, statements: readonly string[]): Promise<void> {
  try {
    for (const statement of statements) await connection.run(statement);
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
