import duckdb from '@duckdb/node-bindings';
import { type DuckDBAppender, DuckDBDataChunk, DuckDBTypeId } from '@duckdb/node-api';
import {
  COLUMN_BATCH_MAX_ROWS,
  type ColumnBatch,
  type SpanColumnType,
  columnValueBytes,
  validityMaskBytes,
} from '@governor/otlp';

// Appends a ColumnBatch (rows laid out as DuckDB vectors, see @governor/otlp column-batch.ts) as one
// DataChunk: a column is one copy into its vector (and one into the validity mask when a value is
// null); only the strings longer than 12 bytes take a call each, for DuckDB to copy them into the
// vector's string heap. The row Appender makes a call per value, nulls included: on the ingest
// benchmark's spans (52 columns), 6.4 µs of the appending thread per row against 1.1 (flush apart).
// The @duckdb/node-bindings calls are the ones @duckdb/node-api's own vectors make to flush.

const TYPE_IDS: Readonly<Record<SpanColumnType, DuckDBTypeId>> = {
  VARCHAR: DuckDBTypeId.VARCHAR,
  JSON: DuckDBTypeId.VARCHAR,
  BIGINT: DuckDBTypeId.BIGINT,
  DOUBLE: DuckDBTypeId.DOUBLE,
  INTEGER: DuckDBTypeId.INTEGER,
  BOOLEAN: DuckDBTypeId.BOOLEAN,
  UTINYINT: DuckDBTypeId.UTINYINT,
  TINYINT: DuckDBTypeId.TINYINT,
};

/**
 * Builds the appender of batches of one row type (`columns` as the encoder had them). The first
 * append to an appender checks its table's columns against them; every append checks the batch's
 * sizes, so a malformed batch is an error, never a write outside a vector.
 */
export function createColumnBatchAppender(
  columns: readonly { column: string; type: SpanColumnType }[],
): (appender: DuckDBAppender, batch: ColumnBatch) => void {
  const widths = columns.map((c) => columnValueBytes(c.type));
  const chunks = new WeakMap<DuckDBAppender, DuckDBDataChunk>();
  const chunkFor = (appender: DuckDBAppender): DuckDBDataChunk => {
    let chunk = chunks.get(appender);
    if (chunk) return chunk;
    if (appender.columnCount !== columns.length)
      throw new Error(`the table has ${appender.columnCount} columns, the batches ${columns.length}`);
    const types = columns.map((c, i) => {
      const type = appender.columnType(i);
      if (type.typeId !== TYPE_IDS[c.type])
        throw new Error(
          `column ${i + 1} (${c.column}) of the table is ${type.toString()}, the batches' ${c.type}`,
        );
      return type;
    });
    chunk = DuckDBDataChunk.create(types);
    chunks.set(appender, chunk);
    return chunk;
  };
  return (appender, batch) => {
    const n = batch.rows;
    if (n === 0) return;
    if (!Number.isInteger(n) || n < 0 || n > COLUMN_BATCH_MAX_ROWS)
      throw new Error(`a column batch holds 1 to ${COLUMN_BATCH_MAX_ROWS} rows, not ${n}`);
    if (batch.columns.length !== columns.length)
      throw new Error(`a column batch of ${batch.columns.length} columns for a table of ${columns.length}`);
    const wrapper = chunkFor(appender);
    const chunk = wrapper.chunk;
    const { strings, long } = batch;
    duckdb.data_chunk_reset(chunk);
    for (let c = 0; c < columns.length; c++) {
      const column = batch.columns[c]!;
      const data = column.data;
      if (data.byteLength !== n * widths[c]!)
        throw new Error(`column ${columns[c]!.column}: ${data.byteLength} bytes for ${n} rows`);
      const vector = duckdb.data_chunk_get_vector(chunk, c);
      duckdb.copy_data_to_vector(vector, 0, data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
      const validity = column.validity;
      if (validity) {
        if (validity.byteLength !== validityMaskBytes(n))
          throw new Error(
            `column ${columns[c]!.column}: a validity mask of ${validity.byteLength} bytes for ${n} rows`,
          );
        duckdb.vector_ensure_validity_writable(vector);
        duckdb.copy_data_to_vector_validity(
          vector,
          0,
          validity.buffer as ArrayBuffer,
          validity.byteOffset,
          validity.byteLength,
        );
      }
      for (let i = column.longFrom; i < column.longTo; i += 3) {
        const row = long[i]!;
        const start = long[i + 1]!;
        const end = start + long[i + 2]!;
        if (row < 0 || row >= n || start < 0 || end > strings.length || end < start)
          throw new Error(`column ${columns[c]!.column}: a string outside its batch`);
        duckdb.vector_assign_string_element_len(vector, row, strings.subarray(start, end));
      }
    }
    duckdb.data_chunk_set_size(chunk, n);
    appender.appendDataChunk(wrapper);
  };
}
