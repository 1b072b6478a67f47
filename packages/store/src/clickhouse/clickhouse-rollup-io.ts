import type { ClickHouseClient } from '@clickhouse/client';
import { SPAN_COLUMNS, type SpanRow } from '@governor/otlp';
import { type DescribedColumn, MINUTE_NS } from './clickhouse-schema.ts';
import { renderClickHouseParams } from './render-params.ts';
import { FACTS_FROM_SQL, extentRows, factsFromNs } from './request-extent.ts';

// What a node's rollup reads from and writes to ClickHouse (decision 3 of docs/scale-out-design.md):
// every span of the traces it recomputes, the newest facts of those traces and of every request of
// their tasks, and the facts it computed, as a new version of each trace's rows.

export type FactsRow = Record<string, unknown>;

export interface ClickHouseRollupIo {
  /**
   * Every span of these traces that started in [fromNs, toNs] (all of them without a range), without
   * attributes, resource and events ('{}', '[]').
   */
  fetchSpans(traceIds: readonly string[], range?: { fromNs: bigint; toNs: bigint }): Promise<SpanRow[]>;
  /**
   * The newest version of the rows of these traces and of every request of these tasks that ended
   * at or after `loEndNs`.
   */
  fetchFacts(traceIds: readonly string[], taskIds: readonly string[], loEndNs: bigint): Promise<FactsRow[]>;
  /**
   * Writes `rows` as the current version of their keys (trace id, start) and a tombstone for each
   * row of `replaced` whose key is no longer among them; request_extent first (request-extent.ts).
   */
  writeFacts(rows: readonly FactsRow[], replaced: readonly FactsRow[], version: bigint): Promise<void>;
}

const INT64_MIN = -(2n ** 63n);

/** IN lists are sent in chunks: 18.16 parses a query of megabytes slowly. */
const CHUNK = 1_000;

export function createClickHouseRollupIo(
  client: ClickHouseClient,
  database: string,
  factColumns: readonly DescribedColumn[],
): ClickHouseRollupIo {
  const select = async <T>(query: string): Promise<T[]> => {
    const result = await client.query({
      query,
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_denormals: 1 },
    });
    return result.json<T>();
  };
  const factTypes = new Map(factColumns.map((c) => [c.name, c.type]));
  // The extent this process wrote per minute (extentRows writes only what raises it).
  const extentWritten = new Map<bigint, bigint>();
  return {
    async fetchSpans(traceIds, range) {
      const out: SpanRow[] = [];
      const seen = new Set<string>();
      // span_store is sorted by the minute a span started: the range skips all other minutes.
      const within = range
        ? ` AND start_ns >= ${int64(range.fromNs)} AND start_ns <= ${int64(range.toNs)} AND ${minuteBetween(range.fromNs, range.toNs)}`
        : '';
      for (let i = 0; i < traceIds.length; i += CHUNK) {
        const ids = traceIds
          .slice(i, i + CHUNK)
          .map(quote)
          .join(', ');
        // Not the attributes, resource and events: the rollup does not read them. Not FINAL, which
        // reads every column of the whole range before the filter: a span's copies (a batch sent
        // again) are equal, and one of each is kept here.
        const rows = await select<Record<string, unknown>>(
          `SELECT ${SPAN_READ_COLUMNS} FROM ${database}.span_store WHERE trace_id IN (${ids})${within}`,
        );
        for (const row of rows) {
          const key = `${row.trace_id}|${row.span_id}`;
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(toSpanRow({ ...row, attributes: '{}', resource: '{}', events: '[]' }));
        }
      }
      return out;
    },
    async fetchFacts(traceIds, taskIds, loEndNs) {
      const out: FactsRow[] = [];
      if (traceIds.length + taskIds.length === 0) return out;
      // Requests ending at or after loEndNs started at or after this (request-extent.ts): the bound
      // on request_facts' sort key.
      let loStartNs = INT64_MIN;
      if (loEndNs > INT64_MIN) {
        const [extent] = await select<{ lo: string; n: string }>(
          renderClickHouseParams(FACTS_FROM_SQL.replaceAll('{{database}}', database), {
            from_ns: loEndNs - 1n,
          }),
        );
        loStartNs = factsFromNs(extent, loEndNs);
      }
      const traceSet = new Set(traceIds);
      const taskSet = new Set(taskIds);
      const chunks = Math.max(Math.ceil(traceIds.length / CHUNK), Math.ceil(taskIds.length / CHUNK));
      // Every version of each key (trace id, start) one of whose versions matches, then the newest
      // version of each, kept if it matches — FINAL's result. Not FINAL itself: it reads every column
      // of the whole range before the filter, where this reads the narrow columns of the range and
      // the rest only for the keys found. A key's versions share a shard, so the keys are found in
      // each shard's own table.
      const newest = new Map<string, Record<string, unknown>>();
      for (let i = 0; i < chunks; i++) {
        const traces = traceIds.slice(i * CHUNK, (i + 1) * CHUNK).map(quote);
        const tasks = taskIds.slice(i * CHUNK, (i + 1) * CHUNK).map(quote);
        const where = [
          traces.length > 0 ? `trace_id IN (${traces.join(', ')})` : null,
          tasks.length > 0 ? `task_id IN (${tasks.join(', ')})` : null,
        ]
          .filter((w) => w !== null)
          .join(' OR ');
        const rows = await select<Record<string, unknown>>(
          `SELECT * FROM ${database}.request_facts
           WHERE start_ns >= ${int64(loStartNs)} AND ${minuteBetween(loStartNs, null)} AND (trace_id, start_ns) IN (
             SELECT trace_id, start_ns FROM ${database}.request_facts_local
             WHERE start_ns >= ${int64(loStartNs)} AND ${minuteBetween(loStartNs, null)}
               AND end_ns >= ${int64(loEndNs)} AND (${where})
           )`,
        );
        for (const row of rows) {
          const key = `${row.trace_id}|${row.start_ns}`;
          const before = newest.get(key);
          if (!before || BigInt(String(row.version)) > BigInt(String(before.version))) newest.set(key, row);
        }
      }
      for (const row of newest.values()) {
        if (Number(row.deleted) !== 0) continue;
        if (row.end_ns !== null && BigInt(String(row.end_ns)) < loEndNs) continue;
        if (!traceSet.has(String(row.trace_id)) && !taskSet.has(String(row.task_id))) continue;
        const { version: _version, deleted: _deleted, ...facts } = row;
        out.push(fromClickHouse(facts, factTypes));
      }
      return out;
    },
    async writeFacts(rows, replaced, version) {
      const kept = new Set(rows.map((r) => `${r.trace_id}|${String(r.start_ns)}`));
      const tombstones = replaced.filter((r) => !kept.has(`${r.trace_id}|${String(r.start_ns)}`));
      if (rows.length + tombstones.length === 0) return;
      const extent = extentRows(rows, extentWritten);
      if (extent.length > 0)
        await client.insert({
          table: `${database}.request_extent`,
          values: extent,
          format: 'JSONEachRow',
          clickhouse_settings: { insert_distributed_sync: 1 },
        });
      await client.insert({
        table: `${database}.request_facts`,
        values: [
          ...rows.map((row) => ({
            ...toClickHouse(row, factTypes),
            version: version.toString(),
            deleted: 0,
          })),
          ...tombstones.map((row) => ({
            ...toClickHouse(row, factTypes),
            version: version.toString(),
            deleted: 1,
          })),
        ],
        format: 'JSONEachRow',
        clickhouse_settings: { insert_distributed_sync: 1 },
      });
    },
  };
}

/**
 * The sort keys' first column (the minute of start_ns) bounded as start_ns is: ClickHouse 18.16
 * skips parts and granules by a condition on the key's own expression, not on start_ns.
 */
function minuteBetween(fromNs: bigint, toNs: bigint | null): string {
  const minute = (ns: bigint) => `intDiv(${int64(ns)}, ${MINUTE_NS})`;
  const column = `intDiv(start_ns, ${MINUTE_NS})`;
  return toNs === null
    ? `${column} >= ${minute(fromNs)}`
    : `${column} BETWEEN ${minute(fromNs)} AND ${minute(toNs)}`;
}

function int64(value: bigint): string {
  return `toInt64('${value}')`;
}

function quote(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

const SPAN_READ_COLUMNS = SPAN_COLUMNS.map((c) => c.column)
  .filter((c) => c !== 'attributes' && c !== 'resource' && c !== 'events')
  .join(', ');

const SPAN_TYPES = new Map(SPAN_COLUMNS.map((c) => [c.column, c.type as string]));

function toSpanRow(row: Record<string, unknown>): SpanRow {
  const typed = fromClickHouse(row, SPAN_TYPES);
  const out: Record<string, unknown> = {};
  for (const { column, field } of SPAN_COLUMNS) out[field] = typed[column] ?? null;
  return out as unknown as SpanRow;
}

/** ClickHouse's JSON values as DuckDB's: Int64 from strings, UInt8 booleans, quoted denormals. */
function fromClickHouse(row: Record<string, unknown>, types: ReadonlyMap<string, string>): FactsRow {
  const out: FactsRow = {};
  for (const [column, value] of Object.entries(row)) {
    const type = types.get(column);
    if (value === null || value === undefined) out[column] = null;
    else if (type === 'BIGINT') out[column] = BigInt(value as string);
    else if (type === 'BOOLEAN') out[column] = value === 1 || value === true;
    else if (type === 'DOUBLE' || type === 'INTEGER' || type === 'UTINYINT' || type === 'TINYINT')
      out[column] = typeof value === 'string' ? Number(value.replace(/^(-?)inf$/, '$1Infinity')) : value;
    else out[column] = value;
  }
  return out;
}

function toClickHouse(row: FactsRow, types: ReadonlyMap<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    const type = types.get(column);
    if (value === null || value === undefined) out[column] = null;
    else if (type === 'BIGINT') out[column] = String(value);
    else if (type === 'BOOLEAN') out[column] = value ? 1 : 0;
    else if (typeof value === 'number' && !Number.isFinite(value))
      out[column] = String(value).toLowerCase().replace('infinity', 'inf');
    else out[column] = value;
  }
  return out;
}
