import type { ClickHouseClient } from '@clickhouse/client';
import { METRIC_POINT_COLUMNS, SPAN_COLUMNS } from '@governor/otlp';
import { ReadDeadlineError } from '../connection-pool.ts';
import { readDeadlineLeft } from '../read-deadline-scope.ts';
import type { DescribedColumn } from './clickhouse-schema.ts';
import { type ClickHouseParam, renderClickHouseParams } from './render-params.ts';
import { FACTS_FROM_PARAM, FACTS_FROM_SQL, factsFromNs } from './request-extent.ts';

// Internal reads on ClickHouse (signals, traces, tasks): a query written for ClickHouse (the
// `*.clickhouse.sql` files), `{{database}}` replaced by the configured database and `$name`
// placeholders by escaped literals (render-params.ts: 18.16 has no query parameters). Rows come
// back in the shapes the DuckDB store's `query` gives, so the code above reads both alike: Int64 as
// decimal strings (toBigIntOrNull reads both), NaN/±Inf as "nan"/"inf" strings (read as no value),
// and the columns that are BOOLEAN in DuckDB's tables — UInt8 on ClickHouse — as true/false.
//
// A read keeps to the read deadline in scope (withReadDeadline), else to `readDeadlineMs`: the
// request is aborted at the deadline and fails with ReadDeadlineError, as on DuckDB.
//
// A query that names $facts_from_ns (a bound on request_facts' start for the requests ending after
// $from_ns, request-extent.ts) gets it filled in here by one small read of request_extent first.

export interface ClickHouseReader {
  readonly engine: 'clickhouse';
  readonly database: string;
  readonly readDeadlineMs: number;
  query<T = Record<string, unknown>>(
    sql: string,
    params?: Readonly<Record<string, ClickHouseParam>>,
    settings?: Record<string, number>,
  ): Promise<T[]>;
}

export interface ClickHouseReaderOptions {
  database: string;
  readDeadlineMs: number;
  /** request_facts' columns as DuckDB describes them (its BOOLEAN columns are read back as booleans). */
  factColumns: readonly DescribedColumn[];
}

interface JsonResult {
  meta?: { name: string; type: string }[];
  data: Record<string, unknown>[];
}

export function createClickHouseReader(
  client: ClickHouseClient,
  options: ClickHouseReaderOptions,
): ClickHouseReader {
  const booleans = new Set<string>([
    ...SPAN_COLUMNS.filter((c) => c.type === 'BOOLEAN').map((c) => c.column),
    ...METRIC_POINT_COLUMNS.filter((c) => c.type === 'BOOLEAN').map((c) => c.column),
    ...options.factColumns.filter((c) => c.type === 'BOOLEAN').map((c) => c.name),
  ]);
  const reader: ClickHouseReader = {
    engine: 'clickhouse',
    database: options.database,
    readDeadlineMs: options.readDeadlineMs,
    async query<T>(
      sql: string,
      params: Readonly<Record<string, ClickHouseParam>> = {},
      settings: Record<string, number> = {},
    ): Promise<T[]> {
      if (sql.includes(`$${FACTS_FROM_PARAM}`) && !(FACTS_FROM_PARAM in params)) {
        const fromNs = params.from_ns;
        if (typeof fromNs !== 'bigint')
          throw new Error(`$${FACTS_FROM_PARAM} is read from $from_ns (a bigint)`);
        const [row] = await reader.query<{ lo: string; n: string }>(FACTS_FROM_SQL, { from_ns: fromNs });
        return reader.query<T>(sql, { ...params, [FACTS_FROM_PARAM]: factsFromNs(row, fromNs) }, settings);
      }
      const query = renderClickHouseParams(sql.replaceAll('{{database}}', options.database), params);
      const deadline = readDeadlineLeft();
      const leftMs = deadline ? deadline.leftMs : options.readDeadlineMs;
      const totalMs = deadline ? deadline.totalMs : options.readDeadlineMs;
      if (leftMs <= 0) throw new ReadDeadlineError(totalMs);
      const abort = AbortSignal.timeout(Math.ceil(leftMs));
      let result: JsonResult;
      try {
        const response = await client.query({
          query,
          format: 'JSON',
          abort_signal: abort,
          clickhouse_settings: { output_format_json_quote_denormals: 1, ...settings },
        });
        result = await response.json<Record<string, unknown>>();
      } catch (error) {
        if (abort.aborted) throw new ReadDeadlineError(totalMs);
        throw error;
      }
      const flags = (result.meta ?? [])
        .filter((m) => booleans.has(m.name) && /^(Nullable\()?UInt8\)?$/.test(m.type))
        .map((m) => m.name);
      if (flags.length === 0) return result.data as T[];
      for (const row of result.data)
        for (const name of flags) {
          const v = row[name];
          if (v !== null && v !== undefined) row[name] = Number(v) !== 0;
        }
      return result.data as T[];
    },
  };
  return reader;
}
