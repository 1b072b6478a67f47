import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GovernorUnderTest,
  type IngestLoad,
  TEST_TOKENS,
  startGovernorUnderTest,
  startIngestLoad,
  waitFor,
} from './governor-under-test.ts';

// Hostile ad-hoc SQL (issue #8 §2) against a real Governor that ingests spans the whole time.
// Every query must be refused or cut off with a clear 4xx; afterwards the server is healthy and
// every acknowledged span is stored.

let t: GovernorUnderTest;
let load: IngestLoad;
let exportDir: string;
let dbFile: string;

beforeAll(async () => {
  // Long enough that the harmless-but-big queries (a 6M-element list) finish on a loaded 2-core
  // machine; the hostile ones below run far longer than any such timeout. DuckDB's threads run at
  // nice 10 (acks first), so while the suite's other worker is busy they get a small share of a core:
  // the list took 0.8 s alone here and over 6 s in a full CI run.
  t = await startGovernorUnderTest({ server: { sql_timeout_ms: 15_000 } });
  exportDir = join(t.dataDir, 'export');
  dbFile = join(t.dataDir, 'governor.duckdb');
  // Batch n is dated n seconds after the start, so the load's clock runs ahead of the wall clock:
  // start it 12 hours back, or the later batches would pass ingest.max_future_skew and be refused.
  load = startIngestLoad(t.url, {
    concurrency: 2,
    startNs: (BigInt(Date.now()) - 12n * 3_600_000n) * 1_000_000n,
  });
  await waitFor(() => load.ackedRequests() >= 5, 'the ingest load to get going');
});

afterAll(async () => {
  await load?.stop();
  await t?.close();
});

interface Case {
  sql: string | (() => string);
  status: number;
  code: string;
  /** A fragment the message must contain so the operator knows what happened. */
  says: RegExp;
}

const cases: Record<string, Case> = {
  'COPY TO a file outside the data dir': {
    sql: "COPY (SELECT * FROM spans) TO '/tmp/governor-stolen.csv'",
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT and EXPLAIN/,
  },
  'COPY TO the export folder DuckDB may write to': {
    sql: () => `COPY (SELECT 1 AS x) TO '${exportDir}/planted.parquet' (FORMAT parquet)`,
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /read-only/,
  },
  'EXPORT DATABASE': {
    sql: () => `EXPORT DATABASE '${exportDir}/dump'`,
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT/,
  },
  ATTACH: {
    sql: "ATTACH '/tmp/governor-evil.duckdb' AS evil",
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT/,
  },
  INSTALL: { sql: 'INSTALL httpfs', status: 403, code: 'GOV_ERR_SQL_NOT_READ_ONLY', says: /only SELECT/ },
  LOAD: { sql: 'LOAD httpfs', status: 403, code: 'GOV_ERR_SQL_NOT_READ_ONLY', says: /only SELECT/ },
  "read_csv('/etc/passwd')": {
    sql: "SELECT * FROM read_csv('/etc/passwd')",
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /read_csv\(\) is not allowed/,
  },
  'a file path as a table': {
    sql: "SELECT * FROM '/etc/passwd'",
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /looks like a file/,
  },
  "glob('/etc/*')": {
    sql: "SELECT * FROM glob('/etc/*')",
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /glob\(\) is not allowed/,
  },
  'glob over the export folder': {
    sql: () => `SELECT * FROM glob('${exportDir}/**')`,
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /glob\(\) is not allowed/,
  },
  'read_blob of the database file itself': {
    sql: () => `SELECT * FROM read_blob('${dbFile}')`,
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /read_blob\(\) is not allowed/,
  },
  'path traversal out of the export folder': {
    sql: () => `SELECT * FROM read_text('${exportDir}/../governor.duckdb.wal')`,
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /read_text\(\) is not allowed/,
  },
  'two statements': {
    sql: 'SELECT 1; SELECT 2',
    status: 400,
    code: 'GOV_ERR_SQL_MULTIPLE_STATEMENTS',
    says: /2 statements/,
  },
  'a SELECT smuggling a DROP': {
    sql: 'SELECT count(*) FROM spans; DROP TABLE span_store',
    status: 400,
    code: 'GOV_ERR_SQL_MULTIPLE_STATEMENTS',
    says: /exactly one/,
  },
  'PRAGMA that changes state': {
    sql: 'PRAGMA enable_profiling',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /PRAGMA statements are not allowed/,
  },
  'PRAGMA that reads (still a PRAGMA)': {
    sql: '/* harmless? */ PRAGMA version',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /pragma_version\(\)/,
  },
  SET: { sql: 'SET threads = 64', status: 403, code: 'GOV_ERR_SQL_NOT_READ_ONLY', says: /only SELECT/ },
  'SET enable_external_access': {
    sql: 'SET enable_external_access = true',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT/,
  },
  'CALL a pragma': {
    sql: 'CALL pragma_version()',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT/,
  },
  'DELETE the spans': {
    sql: 'DELETE FROM span_store',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /read-only/,
  },
  'CREATE MACRO': {
    sql: 'CREATE MACRO evil() AS TABLE SELECT 1',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT/,
  },
  CHECKPOINT: {
    sql: 'FORCE CHECKPOINT',
    status: 403,
    code: 'GOV_ERR_SQL_NOT_READ_ONLY',
    says: /only SELECT/,
  },
  'force_checkpoint() as a SELECT (aborts the ingest transaction)': {
    sql: 'SELECT * FROM force_checkpoint()',
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /force_checkpoint\(\) is not allowed/,
  },
  'dynamic SQL through query()': {
    sql: `SELECT * FROM query('SELECT * FROM force_checkpoint()')`,
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /query\(\) is not allowed/,
  },
  'EXPLAIN ANALYZE (runs the query)': {
    sql: 'EXPLAIN ANALYZE SELECT * FROM system.main.checkpoint()',
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /checkpoint\(\) is not allowed/,
  },
  sleep_ms: {
    sql: 'SELECT sleep_ms(600000)',
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /sleep_ms\(\) is not allowed/,
  },
  getenv: {
    sql: "SELECT getenv('GOVERNOR_ADMIN_TOKEN')",
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /getenv\(\) is not allowed/,
  },
  'a file read inside a subquery of a CTE': {
    sql: "WITH x AS (SELECT * FROM spans WHERE trace_id IN (SELECT content FROM read_text('/etc/hostname'))) SELECT count(*) FROM x",
    status: 403,
    code: 'GOV_ERR_SQL_FORBIDDEN',
    says: /read_text\(\) is not allowed/,
  },
  'a syntax error': {
    sql: 'SELEC 1',
    status: 400,
    code: 'GOV_ERR_SQL_INVALID',
    says: /does not parse/,
  },
  'a huge cross join': {
    sql: 'SELECT count(*) FROM range(1000000000) a, range(1000000000) b',
    status: 408,
    code: 'GOV_ERR_SQL_TIMEOUT',
    says: /cancelled/,
  },
  'unbounded recursion': {
    sql: 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
    status: 408,
    code: 'GOV_ERR_SQL_TIMEOUT',
    says: /cancelled/,
  },
  'a huge sort': {
    sql: 'SELECT i, count(*) AS c FROM range(200000000) t(i) GROUP BY i ORDER BY c DESC, i',
    status: 408,
    code: 'GOV_ERR_SQL_TIMEOUT',
    says: /cancelled/,
  },
  'one enormous list value': {
    sql: 'SELECT list(i) AS big FROM range(6000000) t(i)',
    status: 400,
    code: 'GOV_ERR_SQL_RESULT_TOO_LARGE',
    says: /larger than/,
  },
};

describe('hostile ad-hoc SQL while ingesting', () => {
  for (const [name, c] of Object.entries(cases)) {
    it(`refuses ${name}`, async () => {
      const sql = typeof c.sql === 'function' ? c.sql() : c.sql;
      const before = load.ackedRequests();
      const { status, body } = await t.sql(sql);
      expect({ status, code: body.error?.code }).toEqual({ status: c.status, code: c.code });
      expect(body.error?.message).toMatch(c.says);
      expect(body.error?.message).not.toContain(TEST_TOKENS.admin);
      // Still healthy and still ingesting after each one.
      expect((await fetch(`${t.url}/api/health`)).status).toBe(200);
      await waitFor(() => load.ackedRequests() > before, 'ingest to keep acknowledging');
    });
  }

  it('still answers the harmless ones: catalog functions, the row cap, views', async () => {
    const settings = await t.sql('SELECT name, value FROM duckdb_settings() WHERE name = $$threads$$');
    expect(settings.status).toBe(200);
    const external = await t.sql("SELECT value FROM duckdb_settings() WHERE name = 'enable_external_access'");
    expect(external.body.rows).toEqual([['false']]);
    const capped = await t.sql('SELECT * FROM range(1000000)', 10);
    expect(capped).toMatchObject({ status: 200, body: { truncated: true } });
    expect(capped.body.rows).toHaveLength(10);
    expect((await t.sql('DESCRIBE spans')).status).toBe(200);
    expect((await t.sql('SELECT * FROM pragma_version()')).status).toBe(200);
    expect((await t.sql('EXPLAIN SELECT count(*) FROM spans')).status).toBe(200);
  });

  it('left nothing behind and lost no acknowledged span', async () => {
    await load.stop();
    expect(load.failures).toEqual([]);
    const planted = await fetch(`${t.url}/api/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKENS.admin}` },
      body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM spans' }),
    });
    const stored = ((await planted.json()) as { rows: [[number]] }).rows[0][0];
    expect(load.ackedSpans).toBeGreaterThan(0);
    expect(stored).toBe(load.ackedSpans);
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${exportDir}/planted.parquet`)).toBe(false);
    expect(existsSync(`${exportDir}/dump`)).toBe(false);
    expect(existsSync('/tmp/governor-stolen.csv')).toBe(false);
  });
});
