import type { ClickHouseClient } from '@clickhouse/client';
import { UserQueryError, type UserQueryOptions, type UserQueryResult } from '../run-user-query.ts';

// Ad-hoc SQL on ClickHouse (POST /api/sql): through a user whose profile sets readonly=1, so the
// server itself refuses anything but reads, whatever the text says. ClickHouse takes one statement
// per HTTP request. Under readonly=1 a request may not change settings either, so nothing is sent
// with it: the time limit is the client's (the request is aborted), and the server-side limits
// (max_execution_time, max_result_rows, max_memory_usage) belong in that user's profile
// (docs/scale-out.md). The row cap wraps the query as a subquery.

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export async function runClickHouseUserQuery(
  client: ClickHouseClient | null,
  database: string,
  sql: string,
  options: UserQueryOptions,
): Promise<UserQueryResult> {
  if (!client)
    throw new UserQueryError(
      'GOV_ERR_SQL_FORBIDDEN',
      'ad-hoc SQL on the ClickHouse engine needs a read-only user: set store.clickhouse.readonly_user_env (a user whose profile has readonly=1)',
    );
  const text = sql.trim().replace(/;\s*$/, '');
  if (text === '')
    throw new UserQueryError('GOV_ERR_SQL_EMPTY', 'the query is empty; send one SELECT statement');
  if (!/^(SELECT|WITH)\b/i.test(text))
    throw new UserQueryError('GOV_ERR_SQL_NOT_READ_ONLY', 'send one SELECT statement (ClickHouse engine)');
  if (/;\s*\S/.test(text.replace(/'(?:[^'\\]|\\.)*'/g, "''")))
    throw new UserQueryError(
      'GOV_ERR_SQL_MULTIPLE_STATEMENTS',
      'the query holds several statements; send exactly one SELECT',
    );
  const started = performance.now();
  const abort = AbortSignal.timeout(options.timeoutMs);
  let body: { meta?: { name: string; type: string }[]; data: unknown[][] };
  try {
    const result = await client.query({
      query: `SELECT * FROM (${text}\n) LIMIT ${options.limit + 1}`,
      format: 'JSONCompact',
      abort_signal: abort,
      clickhouse_settings: {},
    });
    body = (await result.json()) as typeof body;
  } catch (error) {
    if (abort.aborted)
      throw new UserQueryError(
        'GOV_ERR_SQL_TIMEOUT',
        `the query ran longer than ${options.timeoutMs} ms and was cancelled`,
      );
    const message = (error as Error).message.split('\n')[0] ?? '';
    const code = /Code: (\d+)/.exec(message)?.[1];
    // 164: READONLY; 497: ACCESS_DENIED.
    if (code === '164' || code === '497') throw new UserQueryError('GOV_ERR_SQL_NOT_READ_ONLY', message);
    if (code === '62')
      throw new UserQueryError('GOV_ERR_SQL_INVALID', `the query does not parse: ${message}`);
    throw new UserQueryError('GOV_ERR_SQL_FAILED', message);
  }
  const rows = body.data;
  const truncated = rows.length > options.limit;
  if (truncated) rows.length = options.limit;
  if (JSON.stringify(rows).length > (options.maxBytes ?? DEFAULT_MAX_BYTES))
    throw new UserQueryError(
      'GOV_ERR_SQL_RESULT_TOO_LARGE',
      'the result is too large; select fewer columns or rows',
    );
  return {
    columns: (body.meta ?? []).map((m) => ({ name: m.name, type: m.type })),
    rows,
    truncated,
    elapsedMs: performance.now() - started,
  };
}
