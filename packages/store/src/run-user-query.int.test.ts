import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { UserQueryError, runUserQuery } from './run-user-query.ts';

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('runUserQuery', () => {
  it('answers DuckDB refusing a file read (here hidden behind a view) with GOV_ERR_SQL_FILE_ACCESS', async () => {
    dir = mkdtempSync(join(tmpdir(), 'governor-sql-'));
    const csv = join(dir, 'secret.csv');
    writeFileSync(csv, 'a,b\n1,2\n');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run(`CREATE VIEW leaked AS SELECT * FROM read_csv('${csv}')`);
      await connection.run('SET enable_external_access=false');
      const run = runUserQuery(connection, 'SELECT * FROM leaked', { limit: 10, timeoutMs: 5_000 });
      await expect(run).rejects.toBeInstanceOf(UserQueryError);
      await expect(run).rejects.toMatchObject({
        code: 'GOV_ERR_SQL_FILE_ACCESS',
        message: expect.stringMatching(/cannot read or write files.*Permission Error/),
      });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
