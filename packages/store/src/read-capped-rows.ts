import {
  type DuckDBDataChunk,
  DuckDBArrayVector,
  DuckDBListVector,
  type DuckDBResult,
  DuckDBStructVector,
  type DuckDBVector,
  JSDuckDBValueConverter,
} from '@duckdb/node-api';
import { toJsValue } from './to-js-value.ts';

// Reads a user query's result chunk by chunk, converting to JS only up to the row cap and
// within a size budget. Without the budget one `SELECT list(i) FROM range(1e8)` becomes a
// 100-million-element JS array on the event loop that also serves ingest.

export class ResultTooLargeError extends Error {
  override readonly name = 'ResultTooLargeError';
}

export interface ResultCaps {
  limit: number;
  /** Values in the result, nested list/struct elements included. */
  maxValues: number;
  /** Rough JSON size of the result. */
  maxBytes: number;
}

export async function readCappedRows(
  result: DuckDBResult,
  caps: ResultCaps,
): Promise<{ rows: unknown[][]; truncated: boolean }> {
  const rows: unknown[][] = [];
  let values = 0;
  let bytes = 0;
  while (rows.length <= caps.limit) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const take = Math.min(chunk.rowCount, caps.limit + 1 - rows.length);
    values += countValues(chunk, take);
    if (values > caps.maxValues) throw tooLarge(`${caps.maxValues.toLocaleString('en-US')} values`);
    for (let r = 0; r < take; r++) {
      const row = chunk.convertRowValues(r, JSDuckDBValueConverter).map(toJsValue);
      bytes += estimateBytes(row);
      if (bytes > caps.maxBytes) throw tooLarge(`${Math.round(caps.maxBytes / 1024 / 1024)} MiB`);
      rows.push(row);
    }
  }
  const truncated = rows.length > caps.limit;
  return { rows: truncated ? rows.slice(0, caps.limit) : rows, truncated };
}

function tooLarge(cap: string): ResultTooLargeError {
  return new ResultTooLargeError(
    `the result is larger than ${cap}; select fewer columns, aggregate, or lower the limit`,
  );
}

/** Values in the first `rows` rows, counting nested elements; cheap (no conversion). */
function countValues(chunk: DuckDBDataChunk, rows: number): number {
  let n = 0;
  for (let c = 0; c < chunk.columnCount; c++) {
    const vector = chunk.getColumnVector(c);
    n += rows + (rows === chunk.rowCount ? nestedValues(vector) : nestedValues(vector.slice(0, rows)));
  }
  return n;
}

function nestedValues(vector: DuckDBVector): number {
  if (vector instanceof DuckDBListVector) {
    const child = vector.childVector;
    return child.itemCount + nestedValues(child);
  }
  if (vector instanceof DuckDBArrayVector) {
    return vector.itemCount * vector.type.length;
  }
  if (vector instanceof DuckDBStructVector) {
    let n = 0;
    for (let i = 0; i < vector.type.entryCount; i++) n += nestedValues(vector.entryVectorAt(i));
    return n;
  }
  return 0;
}

function estimateBytes(value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number' || typeof value === 'boolean') return 8;
  if (Array.isArray(value)) {
    let n = 2;
    for (const v of value) n += estimateBytes(v) + 1;
    return n;
  }
  if (typeof value === 'object') {
    let n = 2;
    for (const [k, v] of Object.entries(value)) n += k.length + 3 + estimateBytes(v);
    return n;
  }
  return 8;
}
