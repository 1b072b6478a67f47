import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPrepared } from './prepared-statements.ts';

// A statement planned once must still answer what the database holds now, for the values given now.

let instance: DuckDBInstance;
let connection: DuckDBConnection;
beforeEach(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  await connection.run('CREATE TABLE t AS SELECT range AS x, range % 3 AS k FROM range(100)');
});
afterEach(() => {
  connection.closeSync();
  instance.closeSync();
});

const count = async (sql: string, params: Record<string, unknown>) =>
  Number((await runPrepared(connection, sql, params as never)).getRowsJS()[0]![0]);

describe('runPrepared', () => {
  it('answers each run with its own values, NULL and other types included', async () => {
    const sql = 'SELECT count(*) FROM t WHERE ($min::BIGINT IS NULL OR x >= $min::BIGINT) AND k = $k';
    expect(await count(sql, { min: 90n, k: 0n })).toBe(4);
    expect(await count(sql, { min: 0n, k: 1n })).toBe(33);
    expect(await count(sql, { min: null, k: 2n })).toBe(33);
    expect(await count(sql, { min: 99, k: 0 })).toBe(1);
  });

  it('sees rows written and views redefined since the statement was planned', async () => {
    const sql = 'SELECT count(*) FROM v WHERE x >= $min';
    await connection.run('CREATE VIEW v AS SELECT x FROM t');
    expect(await count(sql, { min: 50n })).toBe(50);
    await connection.run('INSERT INTO t SELECT range + 100, 0 FROM range(10)');
    expect(await count(sql, { min: 50n })).toBe(60);
    await connection.run('CREATE OR REPLACE VIEW v AS SELECT x FROM t WHERE k = 0');
    expect(await count(sql, { min: 50n })).toBe(27);
  });

  it('keeps answering when more statements run than it keeps', async () => {
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 60; i++)
        expect(await count(`SELECT count(*) + ${i} FROM t WHERE x < $n`, { n: BigInt(i) })).toBe(2 * i);
  });

  it('runs a statement again after a run of it was interrupted (a read past its deadline)', async () => {
    const sql = 'SELECT count(*) FROM range($n::BIGINT) a, range(100000) b WHERE (a.range * b.range) % 7 = 3';
    const long = count(sql, { n: 1_000_000n });
    setTimeout(() => connection.interrupt(), 100);
    await expect(long).rejects.toThrow(/interrupt/i);
    expect(await count(sql, { n: 7n })).toBe(Math.floor((6 * 100_000) / 7));
  });

  it('reports the error of a statement that cannot run, and runs the next one', async () => {
    await expect(count('SELECT count(*) FROM missing WHERE x > $n', { n: 1n })).rejects.toThrow(/missing/);
    expect(await count('SELECT count(*) FROM t WHERE x > $n', { n: 98n })).toBe(1);
  });
});
