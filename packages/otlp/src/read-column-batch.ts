import { isAscii } from 'node:buffer';
import {
  type ColumnBatch,
  type ColumnData,
  INLINE_STRING_BYTES,
  STRING_ENTRY_BYTES,
  columnValueBytes,
  validityMaskBytes,
} from './column-batch.ts';
import type { SpanColumnType } from './span-row.ts';

// The inverse of createColumnEncoder: a ColumnBatch back to one object per row, keyed by `field`,
// for the writers that take rows rather than vectors (ClickHouse). Each value comes back as the
// encoder was given it: bigint for BIGINT, number for INTEGER / TINYINT / UTINYINT / DOUBLE, boolean
// for BOOLEAN, string for VARCHAR and JSON (the rows carry JSON as its text), null for a null — and
// for an undefined, which the encoder stores as a null too. A string is what its UTF-8 decodes to
// (a lone surrogate comes back as U+FFFD, as from any UTF-8 store).
//
// The rows are made first, every field null (one object literal: one hidden class for all), then
// filled a column at a time, each column in one pass over its vector; a null needs no store. A
// column's long strings lie one after the other in `strings`, so when they are all ASCII (ids,
// attribute JSON) the column's are decoded in one call and each string is a slice of that text (a
// slice keeps its column's text alive while it lives: a batch's rows are meant to go together).

export interface ColumnSpec<Row> {
  field: keyof Row & string;
  type: SpanColumnType;
}

type AnyRow = Record<string, unknown>;
type Setter = (row: AnyRow, value: unknown) => void;
type ColumnReader = (
  rows: AnyRow[],
  n: number,
  column: ColumnData,
  batch: ColumnBatch,
  set: Setter,
  field: string,
) => void;

/** `(row, value) => { row.<field> = value; }` compiled for one field: a store with an inline cache of its own. */
function setter(field: string): Setter {
  return new Function('row', 'value', `row[${JSON.stringify(field)}] = value;`) as Setter;
}

/** `() => ({ <field>: null, … })`: every row with all its fields from the start, in one hidden class. */
function rowFactory(fields: readonly string[]): () => AnyRow {
  const body = fields.map((f) => `${JSON.stringify(f)}: null`).join(', ');
  return new Function(`return { ${body} };`) as () => AnyRow;
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
// Module constants of this file's own: an imported binding can cost a call per read once transpiled.
const ENTRY_BYTES = STRING_ENTRY_BYTES;
const INLINE_BYTES = INLINE_STRING_BYTES;

/**
 * `column.data` as a typed array of `width`-byte values. The encoder's views are aligned (its arena
 * parts are 8-aligned); a view that is not, say from a copy, is read from an aligned copy.
 */
function aligned(data: Uint8Array, width: number): { buffer: ArrayBufferLike; byteOffset: number } {
  return data.byteOffset % width === 0 ? data : data.slice();
}

const isNull = (validity: Uint8Array | null, r: number): boolean =>
  validity !== null && (validity[r >> 3]! & (1 << (r & 7))) === 0;

function readBigInt(rows: AnyRow[], n: number, column: ColumnData, _b: ColumnBatch, set: Setter): void {
  const { buffer, byteOffset } = aligned(column.data, 8);
  const values = new BigInt64Array(buffer, byteOffset, n);
  const validity = column.validity;
  for (let r = 0; r < n; r++) if (!isNull(validity, r)) set(rows[r]!, values[r]!);
}

function readDouble(rows: AnyRow[], n: number, column: ColumnData, _b: ColumnBatch, set: Setter): void {
  const { buffer, byteOffset } = aligned(column.data, 8);
  const values = new Float64Array(buffer, byteOffset, n);
  const validity = column.validity;
  for (let r = 0; r < n; r++) if (!isNull(validity, r)) set(rows[r]!, values[r]!);
}

function readInteger(rows: AnyRow[], n: number, column: ColumnData, _b: ColumnBatch, set: Setter): void {
  const { buffer, byteOffset } = aligned(column.data, 4);
  const values = new Int32Array(buffer, byteOffset, n);
  const validity = column.validity;
  for (let r = 0; r < n; r++) if (!isNull(validity, r)) set(rows[r]!, values[r]!);
}

function readUTinyInt(rows: AnyRow[], n: number, column: ColumnData, _b: ColumnBatch, set: Setter): void {
  const values = column.data;
  const validity = column.validity;
  for (let r = 0; r < n; r++) if (!isNull(validity, r)) set(rows[r]!, values[r]!);
}

function readTinyInt(rows: AnyRow[], n: number, column: ColumnData, _b: ColumnBatch, set: Setter): void {
  const values = new Int8Array(column.data.buffer, column.data.byteOffset, n);
  const validity = column.validity;
  for (let r = 0; r < n; r++) if (!isNull(validity, r)) set(rows[r]!, values[r]!);
}

function readBoolean(rows: AnyRow[], n: number, column: ColumnData, _b: ColumnBatch, set: Setter): void {
  const values = column.data;
  const validity = column.validity;
  for (let r = 0; r < n; r++) if (!isNull(validity, r)) set(rows[r]!, values[r] !== 0);
}

/** An inline string of `length` ≤ 12 bytes at `at`: ASCII without a call out of JavaScript. */
function inlineString(data: Uint8Array, at: number, length: number): string {
  let high = 0;
  for (let i = at; i < at + length; i++) high |= data[i]!;
  if (high > 0x7f) return utf8.decode(data.subarray(at, at + length));
  const d = data;
  const a = at;
  switch (length) {
    case 0:
      return '';
    case 1:
      return String.fromCharCode(d[a]!);
    case 2:
      return String.fromCharCode(d[a]!, d[a + 1]!);
    case 3:
      return String.fromCharCode(d[a]!, d[a + 1]!, d[a + 2]!);
    case 4:
      return String.fromCharCode(d[a]!, d[a + 1]!, d[a + 2]!, d[a + 3]!);
    case 5:
      return String.fromCharCode(d[a]!, d[a + 1]!, d[a + 2]!, d[a + 3]!, d[a + 4]!);
    case 6:
      return String.fromCharCode(d[a]!, d[a + 1]!, d[a + 2]!, d[a + 3]!, d[a + 4]!, d[a + 5]!);
    case 7:
      return String.fromCharCode(d[a]!, d[a + 1]!, d[a + 2]!, d[a + 3]!, d[a + 4]!, d[a + 5]!, d[a + 6]!);
    case 8:
      return String.fromCharCode(
        d[a]!,
        d[a + 1]!,
        d[a + 2]!,
        d[a + 3]!,
        d[a + 4]!,
        d[a + 5]!,
        d[a + 6]!,
        d[a + 7]!,
      );
    case 9:
      return String.fromCharCode(
        d[a]!,
        d[a + 1]!,
        d[a + 2]!,
        d[a + 3]!,
        d[a + 4]!,
        d[a + 5]!,
        d[a + 6]!,
        d[a + 7]!,
        d[a + 8]!,
      );
    case 10:
      return String.fromCharCode(
        d[a]!,
        d[a + 1]!,
        d[a + 2]!,
        d[a + 3]!,
        d[a + 4]!,
        d[a + 5]!,
        d[a + 6]!,
        d[a + 7]!,
        d[a + 8]!,
        d[a + 9]!,
      );
    case 11:
      return String.fromCharCode(
        d[a]!,
        d[a + 1]!,
        d[a + 2]!,
        d[a + 3]!,
        d[a + 4]!,
        d[a + 5]!,
        d[a + 6]!,
        d[a + 7]!,
        d[a + 8]!,
        d[a + 9]!,
        d[a + 10]!,
      );
    default:
      return String.fromCharCode(
        d[a]!,
        d[a + 1]!,
        d[a + 2]!,
        d[a + 3]!,
        d[a + 4]!,
        d[a + 5]!,
        d[a + 6]!,
        d[a + 7]!,
        d[a + 8]!,
        d[a + 9]!,
        d[a + 10]!,
        d[a + 11]!,
      );
  }
}

function readString(
  rows: AnyRow[],
  n: number,
  column: ColumnData,
  batch: ColumnBatch,
  set: Setter,
  field: string,
): void {
  const data = column.data;
  const validity = column.validity;
  const long = batch.long;
  const strings = batch.strings;
  const longTo = column.longTo;
  let li = column.longFrom;
  // The column's long strings, in row order and back to back in `strings`: [first, end).
  let text = '';
  let first = 0;
  if (li < longTo) {
    first = long[li + 1]!;
    const end = long[longTo - 2]! + long[longTo - 1]!;
    // All ASCII: one decode (as Latin-1, which is ASCII's bytes as they are), and a string's UTF-16
    // offsets are its byte offsets.
    if (isAscii(strings.subarray(first, end)))
      text = Buffer.from(strings.buffer, strings.byteOffset, strings.byteLength).toString(
        'latin1',
        first,
        end,
      );
    else first = -1;
  }
  let longRow = li < longTo ? long[li]! : -1;
  for (let r = 0; r < n; r++) {
    if (isNull(validity, r)) {
      if (r === longRow) throw malformed(field, r, 'is null and has a long string');
      continue;
    }
    if (r === longRow) {
      const start = long[li + 1]!;
      const length = long[li + 2]!;
      set(
        rows[r]!,
        first >= 0
          ? text.slice(start - first, start - first + length)
          : utf8.decode(strings.subarray(start, start + length)),
      );
      li += 3;
      longRow = li < longTo ? long[li]! : -1;
      continue;
    }
    const entry = r * ENTRY_BYTES;
    const length =
      data[entry]! | (data[entry + 1]! << 8) | (data[entry + 2]! << 16) | (data[entry + 3]! << 24);
    if (length > INLINE_BYTES || length < 0)
      throw malformed(field, r, `has an entry of ${length >>> 0} bytes inline`);
    set(rows[r]!, inlineString(data, entry + 4, length));
  }
  if (li !== longTo) throw malformed(field, long[li]!, 'has a long string out of row order');
}

/** A batch that createColumnEncoder of these columns cannot have made. */
function malformed(field: string, row: number | null, problem: string): Error {
  const where = row === null ? field : `${field}, row ${row + 1},`;
  return new RangeError(`not a column batch of these columns: ${where} ${problem}`);
}

function columnReader(type: SpanColumnType): ColumnReader {
  switch (type) {
    case 'VARCHAR':
    case 'JSON':
      return readString;
    case 'BIGINT':
      return readBigInt;
    case 'DOUBLE':
      return readDouble;
    case 'INTEGER':
      return readInteger;
    case 'BOOLEAN':
      return readBoolean;
    case 'UTINYINT':
      return readUTinyInt;
    case 'TINYINT':
      return readTinyInt;
  }
}

/**
 * Builds the reader for a row type (`columns` as given to createColumnEncoder): `read(batch)` is
 * the batch's rows, one object per row with every column's `field`. Throws a RangeError for a batch
 * whose layout does not fit the columns (another column list, a truncated vector).
 */
export function createColumnReader<Row>(columns: readonly ColumnSpec<Row>[]): (batch: ColumnBatch) => Row[] {
  const makeRow = rowFactory(columns.map((c) => c.field));
  const readers = columns.map(({ field, type }) => ({
    field,
    type,
    width: columnValueBytes(type),
    read: columnReader(type),
    set: setter(field),
  }));
  return (batch) => {
    const n = batch.rows;
    if (batch.columns.length !== readers.length)
      throw new RangeError(
        `not a column batch of these columns: ${batch.columns.length} columns, expected ${readers.length}`,
      );
    const rows: AnyRow[] = new Array(n);
    for (let r = 0; r < n; r++) rows[r] = makeRow();
    for (let c = 0; c < readers.length; c++) {
      const { field, type, width, read, set } = readers[c]!;
      const column = batch.columns[c]!;
      if (column.data.byteLength !== n * width)
        throw malformed(field, null, `has ${column.data.byteLength} bytes for ${n} ${type} values`);
      if (column.validity && column.validity.byteLength < validityMaskBytes(n))
        throw malformed(field, null, `has a validity mask of ${column.validity.byteLength} bytes`);
      read(rows, n, column, batch, set, field);
    }
    return rows as unknown as Row[];
  };
}

const cache = new WeakMap<readonly ColumnSpec<never>[], (batch: ColumnBatch) => unknown[]>();

/**
 * The rows of `batch`, which createColumnEncoder(columns) made: one object per row with each
 * column's `field` set to the value the encoder was given (null for null or undefined). The reader
 * of a column list is built once and kept while the list lives (SPAN_COLUMNS, METRIC_POINT_COLUMNS).
 */
export function readColumnBatch<Row>(batch: ColumnBatch, columns: readonly ColumnSpec<Row>[]): Row[] {
  const key = columns as readonly ColumnSpec<never>[];
  let read = cache.get(key);
  if (!read) {
    read = createColumnReader(columns) as (batch: ColumnBatch) => unknown[];
    cache.set(key, read);
  }
  return read(batch) as Row[];
}
