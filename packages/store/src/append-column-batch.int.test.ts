import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanRow,
  createColumnEncoder,
  createHopClassifier,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import {
  fleetMetricsRequest,
  llmdTraceRequest,
  sglangTraceRequest,
  syntheticTraceRequest,
  vllmTraceRequest,
} from '@governor/otlp/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createColumnBatchAppender } from './append-column-batch.ts';
import { createRowAppender } from './append-row.ts';
import { runMigrations } from './run-migrations.ts';

// The columnar path must store exactly what the row Appender stores, value for value: the same
// rows go into two fresh databases, one each way, and neither has a row the other lacks.

const T0 = 1_760_000_000_000_000_000n;
const classifier = createHopClassifier();

function spans(): SpanRow[] {
  const requests = [
    syntheticTraceRequest({ spans: 700, seed: 7, startNs: T0 }),
    vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: T0 }),
    sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: T0 }),
    llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: T0 }),
  ];
  const rows = requests.flatMap((r) => normalizeTraceRequest(r, { classifier, aliases: {} }).rows);
  const base = rows[0]!;
  // Strings at the inline limit in bytes (12 and 13, with 2- and 4-byte characters), empty ones,
  // and numbers at their types' limits.
  const edges: SpanRow[] = [
    { ...base, spanId: 'edge-1', name: 'a'.repeat(12), service: 'á'.repeat(6), tenant: 'á'.repeat(7) },
    { ...base, spanId: 'edge-2', name: '', service: `${'b'.repeat(8)}😀`, pool: `${'c'.repeat(9)}😀` },
    {
      ...base,
      spanId: 'edge-3',
      startNs: -(2n ** 63n),
      endNs: 2n ** 63n - 1n,
      kind: 255,
      priority: -(2 ** 31),
    },
    {
      ...base,
      spanId: 'edge-4',
      durationMs: Number.NaN,
      costUsd: Number.POSITIVE_INFINITY,
      priority: 2 ** 31 - 1,
    },
    {
      ...base,
      spanId: 'edge-5',
      attributes: JSON.stringify({ note: 'ünïcødé ✓ 日本語'.repeat(40) }),
      statusMessage: '',
    },
  ];
  return [...rows, ...edges];
}

function points(): MetricPointRow[] {
  return [0n, 1n, 2n].flatMap(
    (i) => normalizeMetricsRequest(fleetMetricsRequest(T0 + i * 15_000_000_000n), {}).rows,
  );
}

let dir: string;
const instances: DuckDBInstance[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'governor-columns-'));
});
afterEach(() => {
  for (const instance of instances.splice(0)) instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

async function database(name: string): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(join(dir, `${name}.duckdb`));
  instances.push(instance);
  const connection = await instance.connect();
  await runMigrations(connection);
  return connection;
}

describe('appending column batches', () => {
  it('stores exactly what the row Appender stores, spans and metric points', async () => {
    const spanRows = spans();
    const pointRows = points();
    expect(pointRows.length).toBeGreaterThan(10);

    const byRow = await database('rows');
    const rowSpans = await byRow.createAppender('span_store');
    const appendSpan = createRowAppender<SpanRow>(SPAN_COLUMNS);
    for (const row of spanRows) appendSpan(rowSpans, row);
    rowSpans.closeSync();
    const rowPoints = await byRow.createAppender('metric_store');
    const appendPoint = createRowAppender<MetricPointRow>(METRIC_POINT_COLUMNS);
    for (const row of pointRows) appendPoint(rowPoints, row);
    rowPoints.closeSync();

    const byColumn = await database('columns');
    const columnSpans = await byColumn.createAppender('span_store');
    const appendSpans = createColumnBatchAppender(SPAN_COLUMNS);
    // In request-sized pieces, some with more rows than one DataChunk holds.
    const encodeSpans = createColumnEncoder<SpanRow>(SPAN_COLUMNS);
    for (const size of [1, 499, 2500]) {
      const piece = spanRows.splice(0, size);
      for (const batch of encodeSpans(piece)) appendSpans(columnSpans, batch);
    }
    for (const batch of encodeSpans(spanRows)) appendSpans(columnSpans, batch);
    columnSpans.closeSync();
    const columnPoints = await byColumn.createAppender('metric_store');
    const appendPoints = createColumnBatchAppender(METRIC_POINT_COLUMNS);
    for (const batch of createColumnEncoder<MetricPointRow>(METRIC_POINT_COLUMNS)(pointRows))
      appendPoints(columnPoints, batch);
    columnPoints.closeSync();

    await byColumn.run(`ATTACH '${join(dir, 'rows.duckdb')}' AS rows_db (READ_ONLY)`);
    for (const table of ['span_store', 'metric_store']) {
      const reader = await byColumn.runAndReadAll(`
        SELECT (SELECT count(*) FROM main.${table}) AS n,
               (SELECT count(*) FROM (SELECT * FROM main.${table} EXCEPT ALL SELECT * FROM rows_db.${table})) AS only_columns,
               (SELECT count(*) FROM (SELECT * FROM rows_db.${table} EXCEPT ALL SELECT * FROM main.${table})) AS only_rows`);
      const [n, onlyColumns, onlyRows] = reader.getRows()[0]!.map(Number);
      expect({ table, n, onlyColumns, onlyRows }).toEqual({
        table,
        n: table === 'span_store' ? spans().length : pointRows.length,
        onlyColumns: 0,
        onlyRows: 0,
      });
    }
    const [edge] = (
      await byColumn.runAndReadAll("SELECT name, service, tenant FROM span_store WHERE span_id = 'edge-1'")
    ).getRowObjects();
    expect(edge).toEqual({ name: 'a'.repeat(12), service: 'á'.repeat(6), tenant: 'á'.repeat(7) });
  });

  it('refuses a batch that does not fit the table instead of writing past a vector', async () => {
    const connection = await database('bad');
    const appender = await connection.createAppender('span_store');
    const append = createColumnBatchAppender(SPAN_COLUMNS);
    const [batch] = createColumnEncoder<SpanRow>(SPAN_COLUMNS)(spans().slice(0, 10));
    const short = {
      ...batch!,
      columns: batch!.columns.map((c, i) => (i === 7 ? { ...c, data: c.data.subarray(8) } : c)),
    };
    expect(() => append(appender, short)).toThrow(/start_ns: 72 bytes for 10 rows/);
    const stray = { ...batch!, long: batch!.long.map((v, i) => (i === 0 ? 10 : v)) };
    expect(() => append(appender, stray)).toThrow(/a string outside its batch/);
    expect(() => createColumnBatchAppender(METRIC_POINT_COLUMNS)(appender, batch!)).toThrow(/columns/);
    appender.clear();
    appender.closeSync();
  });
});
