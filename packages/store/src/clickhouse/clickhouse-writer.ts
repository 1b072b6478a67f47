import type { ClickHouseClient } from '@clickhouse/client';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanColumnType,
  type SpanRow,
} from '@governor/otlp';

// Writes spans and metric points to the Distributed tables (clickhouse-schema.ts) as JSONEachRow,
// one INSERT per table per batch. A batch is acknowledged when ClickHouse has accepted it on every
// shard: `insert_distributed_sync=1` makes the Distributed table forward the rows to the shards
// before it answers (by default it queues them on the receiving server and answers at once, and a
// shard down after that answer loses them silently — probe on 18.16). ClickHouse 18.16 never
// fsyncs a part, so "accepted" means in the shards' page cache: a machine crash can lose the last
// seconds, a process crash cannot.
//
// JSONEachRow, not RowBinary: @clickhouse/client refuses RowBinary for inserts, and 18.16 has no
// JSONCompactEachRow. Int64 values go as decimal strings (a JSON number loses precision past 2^53).

export interface ClickHouseWriter {
  /** Resolves once both tables accepted their rows on every shard; rejects with ClickHouseWriteError. */
  write(spans: readonly SpanRow[], metrics: readonly MetricPointRow[]): Promise<void>;
}

/** A failed INSERT, with ClickHouse's error code when its message carries one ("Code: 241, …"). */
export class ClickHouseWriteError extends Error {
  override readonly name = 'ClickHouseWriteError';
  constructor(
    message: string,
    readonly clickhouseCode: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function createClickHouseWriter(client: ClickHouseClient, database: string): ClickHouseWriter {
  const spanRow = rowEncoder(SPAN_COLUMNS);
  const metricRow = rowEncoder(METRIC_POINT_COLUMNS);
  const insert = async (table: string, values: Record<string, unknown>[]) => {
    if (values.length === 0) return;
    try {
      await client.insert({
        table: `${database}.${table}`,
        values,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_distributed_sync: 1 },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const code = /Code: (\d+)/.exec(message);
      throw new ClickHouseWriteError(
        `ClickHouse refused ${values.length} rows for ${database}.${table}: ${message.split('\n')[0]}`,
        code ? Number(code[1]) : null,
        { cause: error },
      );
    }
  };
  return {
    async write(spans, metrics) {
      await Promise.all([
        insert('span_store', spans.map(spanRow)),
        insert('metric_store', metrics.map(metricRow)),
      ]);
    },
  };
}

/** Turns a row object into the JSONEachRow object of its table's columns. */
function rowEncoder<Row>(columns: readonly { column: string; field: keyof Row; type: SpanColumnType }[]) {
  return (row: Row): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const { column, field, type } of columns) {
      const value = row[field] as unknown;
      out[column] = value === null || value === undefined ? null : encodeValue(value, type);
    }
    return out;
  };
}

function encodeValue(value: unknown, type: SpanColumnType): unknown {
  switch (type) {
    case 'BIGINT':
      return typeof value === 'bigint' ? value.toString() : String(Math.trunc(Number(value)));
    case 'BOOLEAN':
      return value ? 1 : 0;
    case 'DOUBLE':
      // JSON has no NaN or ±Infinity; ClickHouse reads them from strings.
      return typeof value === 'number' && !Number.isFinite(value)
        ? String(value).toLowerCase().replace('infinity', 'inf')
        : value;
    default:
      return value;
  }
}
