import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT } from '../bench/spawn-governor-process.ts';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';

// POST /api/sql and `governor query` (docs/api.md): one read-only statement, row cap, timeout.
// The hostile cases (COPY, ATTACH, file reads, maintenance functions…) are covered in depth by
// test/security; here are the everyday answers a user sees.

let t: TestGovernor;

beforeAll(async () => {
  t = await startTestGovernor({ server: { sql_timeout_ms: 300 } });
  const response = await fetch(`${t.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: Buffer.from(
      encodeTraceRequestProtobuf(
        syntheticTraceRequest({ spans: 20, seed: 5, startNs: BigInt(Date.now()) * 1_000_000n }),
      ),
    ),
  });
  expect(response.status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

async function sql(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${t.url}/api/sql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('POST /api/sql', () => {
  it('answers a SELECT with columns, types, rows, truncated and elapsedMs', async () => {
    const { status, body } = await sql({
      sql: "SELECT 42::INTEGER AS answer, 'x' AS s, 1.5::DOUBLE AS d, NULL::VARCHAR AS n, 2::BIGINT ^ 60 AS big",
    });
    expect(status).toBe(200);
    expect(body.columns).toEqual([
      { name: 'answer', type: 'INTEGER' },
      { name: 's', type: 'VARCHAR' },
      { name: 'd', type: 'DOUBLE' },
      { name: 'n', type: 'VARCHAR' },
      { name: 'big', type: 'DOUBLE' },
    ]);
    expect(body.rows).toEqual([[42, 'x', 1.5, null, 2 ** 60]]);
    expect(body.truncated).toBe(false);
    expect(typeof body.elapsedMs).toBe('number');
  });

  it('reads the documented views; counts come back as JSON numbers', async () => {
    const { status, body } = await sql({
      sql: 'SELECT count(*) AS n, count(DISTINCT trace_id) AS traces FROM spans',
    });
    expect(status).toBe(200);
    expect(body.rows).toEqual([[20, 5]]);
    expect(body.columns).toEqual([
      { name: 'n', type: 'BIGINT' },
      { name: 'traces', type: 'BIGINT' },
    ]);
  });

  it('cuts the result at limit and says so', async () => {
    const { body } = await sql({ sql: 'SELECT range AS i FROM range(10)', limit: 3 });
    expect(body.rows).toEqual([[0], [1], [2]]);
    expect(body.truncated).toBe(true);
  });

  it.each([
    ['two statements', 'SELECT 1; SELECT 2', 400, 'GOV_ERR_SQL_MULTIPLE_STATEMENTS', /2 statements/],
    ['COPY', "COPY (SELECT 1) TO '/tmp/governor-copy.csv'", 403, 'GOV_ERR_SQL_NOT_READ_ONLY', /only SELECT/],
    ['ATTACH', "ATTACH '/tmp/other.duckdb' AS other", 403, 'GOV_ERR_SQL_NOT_READ_ONLY', /read-only/],
    ['INSTALL', 'INSTALL httpfs', 403, 'GOV_ERR_SQL_NOT_READ_ONLY', /read-only/],
    ['PRAGMA', 'PRAGMA version', 403, 'GOV_ERR_SQL_NOT_READ_ONLY', /PRAGMA statements are not allowed/],
    ['SET', 'SET enable_external_access = true', 403, 'GOV_ERR_SQL_NOT_READ_ONLY', /read-only/],
    ['DELETE', 'DELETE FROM span_store', 403, 'GOV_ERR_SQL_NOT_READ_ONLY', /read-only/],
    [
      "read_csv('/etc/passwd')",
      "SELECT * FROM read_csv('/etc/passwd')",
      403,
      'GOV_ERR_SQL_FORBIDDEN',
      /not allowed/,
    ],
    ['a syntax error', 'SELEC 1', 400, 'GOV_ERR_SQL_INVALID', /does not parse/],
    ['an empty query', '  ', 400, 'GOV_ERR_SQL_EMPTY', /empty/],
    ['an unknown table', 'SELECT * FROM no_such_table', 400, 'GOV_ERR_SQL_INVALID', /no_such_table/],
  ])('refuses %s with a 4xx and a clear message', async (_what, text, status, code, says) => {
    const reply = await sql({ sql: text });
    expect(reply.status).toBe(status);
    expect(reply.body.error).toMatchObject({ code, message: expect.stringMatching(says) });
  });

  it('refuses a body that is not {sql, limit?}', async () => {
    const reply = await sql({ query: 'SELECT 1' });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'GOV_ERR_REQUEST_INVALID' });
  });

  it('cuts off a long query at the configured timeout', async () => {
    const reply = await sql({ sql: 'SELECT sum(range) FROM range(10000000000000)' });
    expect(reply.status).toBe(408);
    expect(reply.body.error).toMatchObject({
      code: 'GOV_ERR_SQL_TIMEOUT',
      message: expect.stringMatching(/300 ms/),
    });
    // The connection is usable again afterwards.
    expect((await sql({ sql: 'SELECT 1 AS one' })).body.rows).toEqual([[1]]);
  });
});

describe('governor query', () => {
  it('prints a table from a running server', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI_PATH,
        'query',
        'SELECT hop, count(*) AS spans FROM spans GROUP BY hop ORDER BY hop',
        '--url',
        t.url,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, GOVERNOR_TOKEN: '' } },
    );
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^hop\s+\| spans$/);
    expect(lines[1]).toMatch(/^-+-\+-+$/);
    expect(lines).toContain('gateway | 5    ');
    expect(lines.at(-1)).toMatch(/^\(4 rows, \d+\.\d ms\)$/);
  });

  it('exits 1 with the server error for a refused query', async () => {
    const run = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', CLI_PATH, 'query', 'DROP TABLE spans', '--url', t.url],
      {
        cwd: REPO_ROOT,
      },
    );
    await expect(run).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/GOV_ERR_SQL_NOT_READ_ONLY/),
    });
  });
});
