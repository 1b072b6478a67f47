import { type DuckDBAppender, DuckDBDataChunk, type DuckDBType, type DuckDBVector } from '@duckdb/node-api';

// Appends rows a DataChunk at a time: each column of up to 2,048 rows is filled in JavaScript and
// handed to DuckDB in one copy (numbers, booleans) or one call per non-null string, where the row
// Appender makes one N-API call per value, nulls included.

/** Rows in one DataChunk (DuckDB's vector size). */
export const CHUNK_ROWS = 2048;

type Appendable = Record<string, unknown>;

/** Builds the column accessors once; the types come from the appender, so they match its table. */
export function createChunkAppender<Row>(
  columns: readonly { field: keyof Row & string }[],
): (appender: DuckDBAppender, rows: readonly Row[], from?: number, to?: number) => void {
  const fields = columns.map((c) => c.field);
  const typesOf = new WeakMap<DuckDBAppender, DuckDBType[]>();
  return (appender, rows, from = 0, to = rows.length) => {
    let types = typesOf.get(appender);
    if (!types) {
      if (appender.columnCount !== fields.length)
        throw new Error(`the table has ${appender.columnCount} columns, the rows ${fields.length}`);
      types = fields.map((_, i) => appender.columnType(i));
      typesOf.set(appender, types);
    }
    for (let start = from; start < to; start += CHUNK_ROWS) {
      const n = Math.min(CHUNK_ROWS, to - start);
      const chunk = DuckDBDataChunk.create(types, n);
      for (let c = 0; c < fields.length; c++) {
        const field = fields[c]!;
        const vector: DuckDBVector = chunk.getColumnVector(c);
        for (let r = 0; r < n; r++) {
          const v = (rows[start + r] as unknown as Appendable)[field];
          vector.setItem(r, (v ?? null) as never);
        }
        vector.flush();
      }
      appender.appendDataChunk(chunk);
    }
  };
}
