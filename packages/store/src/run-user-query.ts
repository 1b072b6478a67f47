import type { DuckDBConnection } from '@duckdb/node-api';
import { type SqlRefusal, checkUserSql } from './check-user-sql.ts';
import { ResultTooLargeError, readCappedRows } from './read-capped-rows.ts';

// The read-only gate for ad-hoc SQL (POST /api/sql, `governor query`): exactly one SELECT or
// EXPLAIN statement, a row cap, a timeout by interrupt. File and network access are already off
// for the whole instance (enable_external_access=false, configuration locked), so a SELECT over
// read_csv('/etc/passwd') fails inside DuckDB too. check-user-sql.ts refuses the SELECTs that act
// (force_checkpoint(), query('…'), read_blob() of the database file…); read-capped-rows.ts keeps
// a huge result off the event loop.

export type UserQueryErrorCode =
  | 'GOV_ERR_SQL_EMPTY'
  | 'GOV_ERR_SQL_MULTIPLE_STATEMENTS'
  | 'GOV_ERR_SQL_NOT_READ_ONLY'
  | 'GOV_ERR_SQL_INVALID'
  | 'GOV_ERR_SQL_TIMEOUT'
  | 'GOV_ERR_SQL_FORBIDDEN'
  | 'GOV_ERR_SQL_FILE_ACCESS'
  | 'GOV_ERR_SQL_RESULT_TOO_LARGE'
  | 'GOV_ERR_SQL_FAILED';

export class UserQueryError extends Error {
  override readonly name = 'UserQueryError';
  constructor(
    readonly code: UserQueryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface UserQueryResult {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  truncated: boolean;
  elapsedMs: number;
}

export interface UserQueryOptions {
  limit: number;
  timeoutMs: number;
  /** Cap on the result's values (nested elements included); default 5,000,000. */
  maxValues?: number;
  /** Cap on the result's rough JSON size; default 64 MiB. */
  maxBytes?: number;
}

const REFUSAL_CODES: Record<SqlRefusal['kind'], UserQueryErrorCode> = {
  pragma: 'GOV_ERR_SQL_NOT_READ_ONLY',
  not_select: 'GOV_ERR_SQL_NOT_READ_ONLY',
  invalid: 'GOV_ERR_SQL_INVALID',
  table_function: 'GOV_ERR_SQL_FORBIDDEN',
  scalar_function: 'GOV_ERR_SQL_FORBIDDEN',
  file_path: 'GOV_ERR_SQL_FORBIDDEN',
};

// duckdb_statement_type: SELECT = 1, EXPLAIN = 4
const ALLOWED_STATEMENT_TYPES = new Set([1, 4]);

export async function runUserQuery(
  connection: DuckDBConnection,
  sql: string,
  options: UserQueryOptions,
): Promise<UserQueryResult> {
  const started = performance.now();
  if (sql.trim() === '')
    throw new UserQueryError('GOV_ERR_SQL_EMPTY', 'the query is empty; send one SELECT statement');
  let extracted: Awaited<ReturnType<DuckDBConnection['extractStatements']>>;
  try {
    extracted = await connection.extractStatements(sql);
  } catch (error) {
    throw new UserQueryError('GOV_ERR_SQL_INVALID', `the query does not parse: ${(error as Error).message}`);
  }
  if (extracted.count === 0)
    throw new UserQueryError('GOV_ERR_SQL_EMPTY', 'the query is empty; send one SELECT statement');
  if (extracted.count > 1) {
    throw new UserQueryError(
      'GOV_ERR_SQL_MULTIPLE_STATEMENTS',
      `the query holds ${extracted.count} statements; send exactly one SELECT or EXPLAIN`,
    );
  }
  const refusal = await checkUserSql(connection, sql);
  if (refusal) throw new UserQueryError(REFUSAL_CODES[refusal.kind], refusal.message);
  let prepared: Awaited<ReturnType<typeof extracted.prepare>>;
  try {
    prepared = await extracted.prepare(0);
  } catch (error) {
    throw fileAccessError(error) ?? new UserQueryError('GOV_ERR_SQL_INVALID', (error as Error).message);
  }
  if (!ALLOWED_STATEMENT_TYPES.has(prepared.statementType as number)) {
    prepared.destroySync();
    throw new UserQueryError(
      'GOV_ERR_SQL_NOT_READ_ONLY',
      "only SELECT and EXPLAIN statements are allowed here; Governor's SQL surface is read-only",
    );
  }
  const timer = setTimeout(() => connection.interrupt(), options.timeoutMs);
  try {
    const result = await prepared.stream();
    const columnNames = result.deduplicatedColumnNames();
    const columnTypes = result.columnTypes().map((t) => t.toString());
    const { rows, truncated } = await readCappedRows(result, {
      limit: options.limit,
      maxValues: options.maxValues ?? 5_000_000,
      maxBytes: options.maxBytes ?? 64 * 1024 * 1024,
    });
    return {
      columns: columnNames.map((name, i) => ({ name, type: columnTypes[i] ?? 'UNKNOWN' })),
      rows,
      truncated,
      elapsedMs: performance.now() - started,
    };
  } catch (error) {
    if (error instanceof ResultTooLargeError)
      throw new UserQueryError('GOV_ERR_SQL_RESULT_TOO_LARGE', error.message);
    const message = (error as Error).message;
    if (/interrupt/i.test(message)) {
      throw new UserQueryError(
        'GOV_ERR_SQL_TIMEOUT',
        `the query ran longer than ${options.timeoutMs} ms and was cancelled; narrow its time range or add filters`,
      );
    }
    if (/^Out of Memory Error/i.test(message)) {
      // DuckDB's own hint (SET memory_limit) is not open to a read-only user; the operator's knob is.
      throw new UserQueryError(
        'GOV_ERR_SQL_FAILED',
        `the query needed more memory than the instance's DuckDB memory_limit allows (${message.split('\n')[0]}); aggregate fewer rows or a shorter time range, or ask the operator to raise server.duckdb_memory_limit`,
      );
    }
    throw fileAccessError(error) ?? new UserQueryError('GOV_ERR_SQL_FAILED', message);
  } finally {
    clearTimeout(timer);
    prepared.destroySync();
  }
}

/** DuckDB's own refusal to touch a file (external access is off for the instance): not a syntax error. */
function fileAccessError(error: unknown): UserQueryError | null {
  const message = (error as Error).message ?? '';
  if (!/^Permission Error/i.test(message)) return null;
  return new UserQueryError(
    'GOV_ERR_SQL_FILE_ACCESS',
    `ad-hoc SQL cannot read or write files (${message.split('\n')[0]}); query Governor's tables and views instead`,
  );
}
