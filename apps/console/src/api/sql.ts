import { requestJson } from '../lib/api-client.ts';

/** Response of POST /api/sql (docs/api.md). */
export interface SqlResult {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  truncated: boolean;
  elapsedMs: number;
}

export function runSql(
  sql: string,
  options: { limit?: number; signal?: AbortSignal } = {},
): Promise<SqlResult> {
  return requestJson<SqlResult>('/api/sql', {
    method: 'POST',
    body: options.limit === undefined ? { sql } : { sql, limit: options.limit },
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** The documented views ad-hoc SQL sees (docs/sql.md). */
export const DOCUMENTED_VIEWS = ['spans', 'requests', 'tasks', 'metric_points'] as const;

export interface SchemaColumn {
  table: string;
  name: string;
  type: string;
}

export async function loadSchema(signal?: AbortSignal): Promise<SchemaColumn[]> {
  const list = DOCUMENTED_VIEWS.map((v) => `'${v}'`).join(', ');
  const result = await runSql(
    `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_name IN (${list}) ORDER BY table_name, ordinal_position`,
    { limit: 2000, ...(signal ? { signal } : {}) },
  );
  const order = (table: string) => DOCUMENTED_VIEWS.indexOf(table as (typeof DOCUMENTED_VIEWS)[number]);
  return result.rows
    .map((row) => ({ table: String(row[0]), name: String(row[1]), type: String(row[2]) }))
    .sort((a, b) => order(a.table) - order(b.table));
}
