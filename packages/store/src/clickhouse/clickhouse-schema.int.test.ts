import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { runMigrations } from '../run-migrations.ts';
import { METRIC_NOT_NULL, SPAN_NOT_NULL } from './clickhouse-schema.ts';

// The ClickHouse tables take NULL exactly where DuckDB's do: a column NOT NULL on one engine only
// would refuse on one what the other accepts.

describe('the ClickHouse schema', () => {
  it('declares NOT NULL the columns DuckDB declares NOT NULL', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await runMigrations(connection);
    const notNull = async (table: string) => {
      const reader = await connection.runAndReadAll(`DESCRIBE ${table}`);
      return new Set(
        reader
          .getRowObjectsJS()
          .filter((r) => r.null === 'NO')
          .map((r) => String(r.column_name)),
      );
    };
    expect(await notNull('span_store')).toEqual(SPAN_NOT_NULL);
    expect(await notNull('metric_store')).toEqual(METRIC_NOT_NULL);
    connection.closeSync();
  });
});
