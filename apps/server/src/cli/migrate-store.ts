import http from 'node:http';
import https from 'node:https';
import type { ControlRepository } from '@governor/control';
import type { ClickHouseStoreConfig } from '@governor/conventions';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanColumnType,
  type SpanRow,
} from '@governor/otlp';
import { type ClickHouseStore, type Store, describeDuckDbTable } from '@governor/store';
import type pg from 'pg';

// The copying behind `governor migrate` (migrate-command.ts): an embedded store's tables, page by
// page, into ClickHouse (telemetry) and PostgreSQL (state), each written under its row identity so
// that a second run replaces what the first one wrote instead of adding to it.

export interface CopyResult {
  table: string;
  target: 'ClickHouse' | 'PostgreSQL';
  rows: number;
  seconds: number;
}

export interface CopyProgress {
  start(
    table: string,
    total: number,
  ): { add(rows: number): void; finish(): { rows: number; seconds: number } };
}

export interface TelemetryTable {
  /** The table's name, the same on both sides. */
  table: 'span_store' | 'metric_store' | 'request_facts';
  /** Where the embedded store keeps it (request_facts lives in the rollup file). */
  source: string;
  target: 'ClickHouse';
  /** Rows per read and per INSERT. */
  pageRows: number;
}

export const TELEMETRY_TABLES: readonly TelemetryTable[] = [
  { table: 'span_store', source: 'span_store', target: 'ClickHouse', pageRows: 10_000 },
  { table: 'metric_store', source: 'metric_store', target: 'ClickHouse', pageRows: 20_000 },
  { table: 'request_facts', source: 'rollup.main.request_facts', target: 'ClickHouse', pageRows: 5_000 },
];

export interface StateTable {
  table: string;
  source: string;
  target: 'PostgreSQL';
  /**
   * Copied column for column by SQL on both sides; false: through the control repositories
   * (copyControlState), which read and write every row of their tables.
   */
  direct: boolean;
  /** The PostgreSQL table's key: a row copied again lands on the same row. */
  key?: readonly string[];
  /** `update`: the copy replaces the row (upsert); `nothing`: the row first written stays. */
  onConflict?: 'update' | 'nothing';
  /** A BIGSERIAL column whose values are copied: its sequence is moved past them afterwards. */
  serial?: string;
}

export const STATE_TABLES: readonly StateTable[] = [
  {
    table: 'control_recommendations',
    source: 'control_recommendations',
    target: 'PostgreSQL',
    direct: false,
  },
  { table: 'control_policies', source: 'control_policies', target: 'PostgreSQL', direct: false },
  // The repository's appendAudit inserts with a new number and refuses an id it has: not repeatable.
  {
    table: 'control_audit',
    source: 'control_audit',
    target: 'PostgreSQL',
    direct: true,
    key: ['id'],
    onConflict: 'nothing',
    serial: 'seq',
  },
  // As the rollback store's remember(): the first value recorded for (actuator, recommendation) wins.
  {
    table: 'control_rollback_values',
    source: 'control_rollback_values',
    target: 'PostgreSQL',
    direct: true,
    key: ['actuator', 'recommendation_id'],
    onConflict: 'nothing',
  },
  // The alert repositories are not exported and read only active or recent rows: SQL, column for column.
  {
    table: 'alert_instances',
    source: 'alert_instances',
    target: 'PostgreSQL',
    direct: true,
    key: ['id'],
    onConflict: 'update',
  },
  {
    table: 'alert_notification_groups',
    source: 'alert_notification_groups',
    target: 'PostgreSQL',
    direct: true,
    key: ['id'],
    onConflict: 'update',
  },
  {
    table: 'alert_engine_state',
    source: 'alert_engine_state',
    target: 'PostgreSQL',
    direct: true,
    key: ['name'],
    onConflict: 'update',
  },
  {
    table: 'alert_deliveries',
    source: 'alert_deliveries',
    target: 'PostgreSQL',
    direct: true,
    key: ['id'],
    onConflict: 'update',
    serial: 'seq',
  },
  {
    table: 'alert_delivery_attempts',
    source: 'alert_delivery_attempts',
    target: 'PostgreSQL',
    direct: true,
    key: ['delivery_id', 'attempt'],
    onConflict: 'update',
  },
];

/**
 * The version migrated request facts are written with: below every version a node's rollup writes
 * (its wall clock in ns), so a node that recomputes a migrated trace — a late span — replaces the
 * migrated row, and a second migration writes the same version again (the same row, once FINAL).
 */
export const MIGRATED_FACTS_VERSION = 1n;

export async function countSource(source: Store, table: string): Promise<number> {
  const [row] = await source.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(row?.n ?? 0);
}

/**
 * Spans past the rollup's progress (request_facts_state.last_rowid): their requests are not in
 * request_facts yet. An estimate once retention has moved rowids; the real run refreshes anyway.
 */
export async function unrolledSpans(source: Store): Promise<number> {
  const [row] = await source.query<{ n: number | string }>(
    'SELECT count(*) AS n FROM span_store WHERE rowid > (SELECT max(last_rowid) FROM request_facts_state)',
  );
  return Number(row?.n ?? 0);
}

const quoteColumn = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Reads `table` in pages of rowids (stable: nothing else writes to the store while it is open
 * here), each page in rowid order, and hands each to `write` while the next page is read.
 */
async function copyPages(
  source: Store,
  table: string,
  columns: readonly string[] | '*',
  pageRows: number,
  write: (rows: Record<string, unknown>[]) => Promise<void>,
): Promise<void> {
  const [range] = await source.query<{ lo: number | string | null; hi: number | string | null }>(
    `SELECT min(rowid) AS lo, max(rowid) AS hi FROM ${table}`,
  );
  if (range?.lo === null || range?.lo === undefined || range.hi === null) return;
  const first = Number(range.lo);
  const last = Number(range.hi);
  const list = columns === '*' ? '*' : columns.map(quoteColumn).join(', ');
  const sql = `SELECT ${list} FROM ${table} WHERE rowid >= $from_rowid AND rowid < $to_rowid ORDER BY rowid`;
  const failure: { error?: unknown } = {};
  let writing: Promise<void> = Promise.resolve();
  for (let from = first; from <= last; from += pageRows) {
    const rows = await source.query(sql, { from_rowid: from, to_rowid: from + pageRows });
    await writing;
    if ('error' in failure) throw failure.error;
    if (rows.length === 0) continue;
    writing = write(rows).catch((error: unknown) => {
      failure.error = error;
    });
  }
  await writing;
  if ('error' in failure) throw failure.error;
}

/** A DuckDB row (JSON-safe values) as the writer's row object: BIGINT exact as bigint, JSON as text. */
function toRowObject<Row>(
  columns: readonly { column: string; field: keyof Row; type: SpanColumnType }[],
  row: Record<string, unknown>,
): Row {
  const out: Record<string, unknown> = {};
  for (const { column, field, type } of columns) {
    const value = row[column];
    out[field as string] =
      value === null || value === undefined
        ? null
        : type === 'BIGINT'
          ? BigInt(value as number | string)
          : type === 'JSON' && typeof value !== 'string'
            ? JSON.stringify(value)
            : value;
  }
  return out as Row;
}

export async function copyTelemetryTable(
  source: Store,
  store: ClickHouseStore,
  t: TelemetryTable,
  progress: CopyProgress,
): Promise<CopyResult> {
  const total = await countSource(source, t.source);
  const step = progress.start(t.table, total);
  let columns: readonly string[];
  let write: (rows: Record<string, unknown>[]) => Promise<void>;
  if (t.table === 'span_store') {
    columns = SPAN_COLUMNS.map((c) => c.column);
    write = (rows) =>
      store.writer.write(
        rows.map((r) => toRowObject<SpanRow>(SPAN_COLUMNS, r)),
        [],
      );
  } else if (t.table === 'metric_store') {
    columns = METRIC_POINT_COLUMNS.map((c) => c.column);
    write = (rows) =>
      store.writer.write(
        [],
        rows.map((r) => toRowObject<MetricPointRow>(METRIC_POINT_COLUMNS, r)),
      );
  } else {
    // The columns ClickHouse's request_facts was created with (DuckDB's own, openClickHouseStore).
    columns = (await describeDuckDbTable('request_facts')).map((c) => c.name);
    write = (rows) => store.rollupIo.writeFacts(rows, [], MIGRATED_FACTS_VERSION);
  }
  await copyPages(source, t.source, columns, t.pageRows, async (rows) => {
    await write(rows);
    step.add(rows.length);
  });
  return { table: t.table, target: t.target, ...step.finish() };
}

/** Recommendations and policies through the repositories: both save as upserts. */
export async function copyControlState(
  from: ControlRepository,
  to: ControlRepository,
  progress: CopyProgress,
): Promise<CopyResult[]> {
  const results: CopyResult[] = [];
  // Every record: listRecommendations takes a limit, so ask for one past any count.
  const records = await from.listRecommendations({ limit: 2_147_483_647 });
  const recommendations = progress.start('control_recommendations', records.length);
  // Oldest first, as they were created.
  const ordered = [...records].reverse();
  for (let i = 0; i < ordered.length; i += 500) {
    const batch = ordered.slice(i, i + 500);
    await to.saveRecommendations(batch);
    recommendations.add(batch.length);
  }
  results.push({ table: 'control_recommendations', target: 'PostgreSQL', ...recommendations.finish() });
  const stored = await from.loadPolicies();
  const policies = progress.start('control_policies', stored ? 1 : 0);
  if (stored) {
    await to.savePolicies(stored);
    policies.add(1);
  }
  results.push({ table: 'control_policies', target: 'PostgreSQL', ...policies.finish() });
  return results;
}

/** A table copied column for column: every DuckDB column must exist in PostgreSQL's table. */
export async function copyStateTable(
  source: Store,
  pool: pg.Pool,
  t: StateTable,
  progress: CopyProgress,
): Promise<CopyResult> {
  const key = t.key ?? [];
  const sourceColumns = (await source.query<{ column_name: string }>(`DESCRIBE ${t.source}`)).map(
    (c) => c.column_name,
  );
  const { rows: targetColumns } = await pool.query<{ column_name: string }>(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
    [t.table],
  );
  const known = new Set(targetColumns.map((c) => c.column_name));
  const missing = sourceColumns.filter((c) => !known.has(c));
  if (missing.length > 0)
    throw new Error(
      `PostgreSQL's ${t.table} has no column ${missing.join(', ')}: its tables come from another Governor version than the store's`,
    );
  const updated = sourceColumns.filter((c) => !key.includes(c) && c !== t.serial);
  const conflict =
    t.onConflict === 'update' && updated.length > 0
      ? `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${updated.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`
      : `ON CONFLICT (${key.join(', ')}) DO NOTHING`;
  const total = await countSource(source, t.source);
  const step = progress.start(t.table, total);
  // PostgreSQL takes at most 65,535 values per statement.
  const pageRows = Math.max(1, Math.floor(30_000 / sourceColumns.length));
  await copyPages(source, t.source, '*', pageRows, async (rows) => {
    // One row per key (the embedded tables have no key constraint; one statement may not touch a row twice).
    const byKey = new Map(rows.map((r) => [JSON.stringify(key.map((k) => r[k])), r]));
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (const row of byKey.values()) {
      tuples.push(`(${sourceColumns.map((c) => `$${values.push(toPostgres(row[c]))}`).join(', ')})`);
    }
    try {
      await pool.query(
        `INSERT INTO ${t.table} (${sourceColumns.join(', ')}) VALUES ${tuples.join(', ')} ${conflict}`,
        values,
      );
    } catch (error) {
      const e = error as { code?: string; constraint?: string; message: string };
      if (e.code === '23505' && t.serial)
        throw new Error(
          `${t.table} in PostgreSQL already holds rows numbered (${t.serial}) like the store's but with other ids (${e.constraint ?? e.message}): Governor nodes wrote there already — migrate into a database before any node has run on it`,
          { cause: error },
        );
      throw error;
    }
    step.add(rows.length);
  });
  if (t.serial) {
    // The numbers were copied: the next one a node takes must come after them.
    await pool.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(${t.serial}) AS m FROM ${t.table}) s WHERE m IS NOT NULL`,
      [t.table, t.serial],
    );
  }
  return { table: t.table, target: t.target, ...step.finish() };
}

function toPostgres(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

export interface ClickHouseAuth {
  user: string;
  password: string;
}

/** The ingest user, as openClickHouseStore takes it from the environment. */
export function clickHouseAuth(config: ClickHouseStoreConfig, env: NodeJS.ProcessEnv): ClickHouseAuth {
  return {
    user: (config.user_env ? env[config.user_env] : undefined) ?? 'default',
    password: (config.password_env ? env[config.password_env] : undefined) ?? '',
  };
}

/**
 * A table written again (a second run, or one after an interrupted run) holds each re-copied row
 * twice until ClickHouse merges its parts: Governor's reads use FINAL and see it once, plain SQL
 * would count it twice. So each shard merges now the partitions with more than one part (every
 * partition this run wrote into a table that already had rows).
 */
export async function deduplicateReruns(
  config: ClickHouseStoreConfig,
  auth: ClickHouseAuth,
  tables: readonly string[],
): Promise<void> {
  for (const url of config.shard_urls ?? [config.url])
    for (const table of tables) {
      const local = `${table}_local`;
      const partitions = (
        await clickHouseHttp(
          url,
          auth,
          `SELECT partition_id FROM system.parts WHERE database = '${config.database}' AND table = '${local}' AND active GROUP BY partition_id HAVING count() > 1 FORMAT TabSeparated`,
        )
      )
        .split('\n')
        .filter((p) => p.length > 0);
      for (const partition of partitions)
        await clickHouseHttp(
          url,
          auth,
          `OPTIMIZE TABLE ${config.database}.${local} PARTITION ID '${partition.replaceAll("'", "\\'")}' FINAL`,
        );
    }
}

/** One statement over ClickHouse's HTTP interface, without a timeout (a merge takes what it takes). */
function clickHouseHttp(url: string, auth: ClickHouseAuth, query: string): Promise<string> {
  const target = new URL(url);
  const request = target.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolveText, reject) => {
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          'X-ClickHouse-User': auth.user,
          ...(auth.password ? { 'X-ClickHouse-Key': auth.password } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200) resolveText(text);
          else
            reject(
              new Error(`ClickHouse at ${url} refused "${query.slice(0, 60)}…": ${text.split('\n')[0]}`),
            );
        });
      },
    );
    req.on('error', reject);
    req.end(query);
  });
}
