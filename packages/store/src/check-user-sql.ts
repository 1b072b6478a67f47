import type { DuckDBConnection } from '@duckdb/node-api';

// The parse-level half of the ad-hoc SQL gate, run before DuckDB binds or plans anything (planning
// `EXPORT DATABASE` already creates its folder). Only SELECTs serialize, so everything else stops
// here; enable_external_access=false keeps DuckDB away from files outside the export folder — but
// some SELECTs still act: `force_checkpoint()` aborts the ingest writer's
// transaction, `query('…')` hides SQL from any check, `read_blob()` reads the database file
// itself, `sleep_ms` holds a connection. This walks DuckDB's own parse tree
// (json_serialize_sql) and refuses such calls: table functions must be on an allow-list,
// a few scalar functions are denied, and file paths as table names (replacement scans) are out.

const SAFE_TABLE_FUNCTIONS = new Set([
  'range',
  'generate_series',
  'unnest',
  'json_each',
  'json_tree',
  'repeat',
  'repeat_row',
  'test_all_types',
  'test_vector_types',
  'icu_calendar_names',
  'pg_timezone_names',
]);
/** Catalog readers: duckdb_tables(), pragma_storage_info('spans')… */
const SAFE_TABLE_FUNCTION_PREFIXES = ['duckdb_', 'pragma_'];

const DENIED_SCALAR_FUNCTIONS = new Set([
  'sleep_ms',
  'write_log',
  'setseed',
  'nextval',
  'currval',
  'getenv',
  'json_execute_serialized_sql',
]);

export interface SqlRefusal {
  kind: 'pragma' | 'not_select' | 'invalid' | 'table_function' | 'scalar_function' | 'file_path';
  message: string;
}

/** Null when the statement may run; otherwise why not, in words an operator can act on. */
export async function checkUserSql(connection: DuckDBConnection, sql: string): Promise<SqlRefusal | null> {
  const text = stripLeadingComments(sql);
  if (/^pragma\b/i.test(text)) {
    return {
      kind: 'pragma',
      message:
        "PRAGMA statements are not allowed here; the read-only ones are table functions, e.g. SELECT * FROM pragma_version() or pragma_table_info('spans')",
    };
  }
  const inner = text.replace(/^explain\s+(analy[sz]e\s+)?(\([^)]*\)\s*)?/i, '');
  const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [inner]);
  const serialized = JSON.parse(String(reader.getRowsJS()[0]?.[0] ?? '{"error":true}')) as {
    error: boolean;
    error_type?: string;
    error_message?: string;
    statements?: unknown[];
  };
  if (serialized.error && serialized.error_type === 'parser') {
    return {
      kind: 'invalid',
      message: `the query does not parse: ${serialized.error_message ?? 'syntax error'}`,
    };
  }
  if (serialized.error || !serialized.statements) {
    // Parse-only: json_serialize_sql serializes SELECTs and nothing else, and binds nothing, so
    // a COPY or EXPORT is refused before DuckDB plans it (planning EXPORT creates its folder).
    return {
      kind: 'not_select',
      message:
        "only SELECT and EXPLAIN statements are allowed here; Governor's SQL surface is read-only (SHOW, DESCRIBE and SUMMARIZE work too)",
    };
  }
  const found = collectReferences(serialized.statements);
  for (const name of found.tableFunctions) {
    if (SAFE_TABLE_FUNCTIONS.has(name) || SAFE_TABLE_FUNCTION_PREFIXES.some((p) => name.startsWith(p)))
      continue;
    if (await isProjectTableMacro(connection, name)) continue;
    return {
      kind: 'table_function',
      message: `the table function ${name}() is not allowed in ad-hoc SQL (files, dynamic SQL and maintenance functions are off); query the views instead — exported history is part of \`spans\``,
    };
  }
  for (const name of found.scalarFunctions) {
    if (DENIED_SCALAR_FUNCTIONS.has(name)) {
      return {
        kind: 'scalar_function',
        message: `the function ${name}() is not allowed in ad-hoc SQL: it changes state or holds a connection`,
      };
    }
  }
  for (const name of found.tableNames) {
    if (/[/\\:~]|\.[a-z0-9]{1,8}$/i.test(name)) {
      return {
        kind: 'file_path',
        message: `"${name}" looks like a file; ad-hoc SQL reads Governor's tables and views only (spans, requests, tasks, metric_points)`,
      };
    }
  }
  return null;
}

interface References {
  tableFunctions: Set<string>;
  scalarFunctions: Set<string>;
  tableNames: Set<string>;
}

function collectReferences(root: unknown): References {
  const refs: References = { tableFunctions: new Set(), scalarFunctions: new Set(), tableNames: new Set() };
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const obj = node as Record<string, unknown>;
    if (obj.type === 'TABLE_FUNCTION' && obj.function && typeof obj.function === 'object') {
      const fn = obj.function as Record<string, unknown>;
      if (typeof fn.function_name === 'string') refs.tableFunctions.add(fn.function_name.toLowerCase());
      stack.push(fn.children, fn.filter, fn.order_bys);
      for (const [key, value] of Object.entries(obj)) if (key !== 'function') stack.push(value);
      continue;
    }
    if (typeof obj.function_name === 'string') refs.scalarFunctions.add(obj.function_name.toLowerCase());
    if (obj.type === 'BASE_TABLE' && typeof obj.table_name === 'string') refs.tableNames.add(obj.table_name);
    stack.push(...Object.values(obj));
  }
  return refs;
}

async function isProjectTableMacro(connection: DuckDBConnection, name: string): Promise<boolean> {
  const reader = await connection.runAndReadAll(
    "SELECT count(*) FROM duckdb_functions() WHERE function_type = 'table_macro' AND NOT internal AND lower(function_name) = $1",
    [name],
  );
  return Number(reader.getRowsJS()[0]?.[0] ?? 0) > 0;
}

function stripLeadingComments(sql: string): string {
  let s = sql.trimStart();
  for (;;) {
    if (s.startsWith('--')) {
      const end = s.indexOf('\n');
      s = end === -1 ? '' : s.slice(end + 1).trimStart();
    } else if (s.startsWith('/*')) {
      const end = s.indexOf('*/');
      s = end === -1 ? '' : s.slice(end + 2).trimStart();
    } else return s;
  }
}
