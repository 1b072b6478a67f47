import type { DuckDBConnection } from '@duckdb/node-api';

// The request rollup's own database file, attached as `rollup`. DuckDB serialises the commits to
// one database file (its WAL), and the ingest writer's group commit is a synchronous call on the
// event loop: while request_facts lived in the main file, every rollup refresh's COMMIT (thousands
// of wide rows, on a thread at background priority) held the writer's next flush — 80–450 ms,
// the largest stalls behind ack p99 in the soak (docs/operations.md, "Where ack latency goes").
// Commits to another attached file do not wait for each other: in a probe of 500-row appender
// flushes beside commits of 7,000 wide rows, flush p99 fell from 71 ms (same file) to 10 ms.
//
// Readers keep the names they had: main.request_facts and main.request_facts_state become views of
// the tables here (the requests and tasks views are built on them). Writers (the refresh,
// retention) name `rollup.main.<table>`: a view takes no writes, and a DuckDB transaction may write
// to one attached database only — so retention records its rollup runs in a retention_runs table of
// this file, beside the rows it deletes.

export const ROLLUP_CATALOG = 'rollup';
export const ROLLUP_FILE = 'governor-rollup.duckdb';

/** Tables that live in the rollup database, moved there (data included) from the main one. */
export const ROLLUP_TABLES = ['request_facts', 'request_facts_state'] as const;

/** Qualified name of a table in the rollup database. */
export const rollupTable = (table: string): string => `${ROLLUP_CATALOG}.main.${table}`;

/**
 * Attaches the rollup database and, the first time, moves the rollup tables into it. Must run after
 * the migrations (which create the tables in the main database, as they always have) and before
 * `enable_external_access=false`, which forbids ATTACH.
 *
 * Each step is one transaction on one database and is redone when its result is missing, so a crash
 * or a full disk at any point leaves a data dir that starts: (1) the table copied into the rollup
 * file — skipped once it exists there; (2) the main table replaced by a view of the copy — skipped
 * once main holds a view. Between (1) and (2) the rows are in both files and the main copy is read
 * until (2) commits; nothing writes to it meanwhile (this runs before any writer starts).
 */
export async function attachRollupDatabase(connection: DuckDBConnection, path: string): Promise<void> {
  await connection.run(`ATTACH '${path.replaceAll("'", "''")}' AS ${ROLLUP_CATALOG}`);
  for (const table of [...ROLLUP_TABLES, 'retention_runs']) {
    const kinds = await objectKinds(connection, table);
    if (!kinds.rollupTable) {
      const ddl = kinds.mainTableSql;
      if (ddl === null)
        throw new Error(
          `${path} has no table ${table}, and the main database no longer holds one: restore ${ROLLUP_FILE} from the backup taken with governor.duckdb (they are one database in two files)`,
        );
      await inTransaction(connection, [
        ddl.replace(/^CREATE TABLE\s+("?)[\w.]*\1\s*\(/i, `CREATE TABLE ${rollupTable(table)}(`),
        // retention_runs records the runs of each file's own tables: the rollup file starts empty.
        ...(table === 'retention_runs'
          ? []
          : [`INSERT INTO ${rollupTable(table)} SELECT * FROM main.${table}`]),
      ]);
    }
    if (table !== 'retention_runs' && kinds.mainTableSql !== null)
      await inTransaction(connection, [
        `DROP TABLE main.${table}`,
        `CREATE VIEW main.${table} AS SELECT * FROM ${rollupTable(table)}`,
      ]);
  }
}

interface ObjectKinds {
  /** The CREATE TABLE statement of main.<table>, when main holds it as a table. */
  mainTableSql: string | null;
  rollupTable: boolean;
}

async function objectKinds(connection: DuckDBConnection, table: string): Promise<ObjectKinds> {
  const reader = await connection.runAndReadAll(
    `SELECT database_name, sql FROM duckdb_tables()
     WHERE schema_name = 'main' AND table_name = $1 AND database_name IN (current_database(), '${ROLLUP_CATALOG}')`,
    [table],
  );
  let mainTableSql: string | null = null;
  let inRollup = false;
  for (const [database, sql] of reader.getRowsJS() as [string, string][]) {
    if (database === ROLLUP_CATALOG) inRollup = true;
    else mainTableSql = sql;
  }
  return { mainTableSql, rollupTable: inRollup };
}

async function inTransaction(connection: DuckDBConnection, statements: readonly string[]): Promise<void> {
  await connection.run('BEGIN TRANSACTION');
  try {
    for (const statement of statements) await connection.run(statement);
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
