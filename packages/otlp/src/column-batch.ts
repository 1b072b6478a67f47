import type { SpanColumnType } from './span-row.ts';

// Rows laid out the way a DuckDB DataChunk holds them, built where the rows are normalized (a decode
// worker) so the thread that appends copies memory instead of making a call per value: a column of
// numbers or booleans is its vector's bytes (little-endian, DuckDB's C API layout), a string column
// is its duckdb_string_t entries (16 bytes each: the byte length, then up to 12 bytes inline) and
// the strings longer than that are UTF-8 in one shared buffer, for the appending thread to hand to
// DuckDB one by one (only DuckDB can place them in a vector's string heap; their entries are empty
// strings until then). A batch is three ArrayBuffers (the columns, the long strings, their index),
// which postMessage transfers.

/** Rows in one batch at most: DuckDB's vector size (duckdb_vector_size), so a batch is one chunk. */
export const COLUMN_BATCH_MAX_ROWS = 2048;
/** Bytes of one duckdb_string_t; strings up to INLINE_STRING_BYTES bytes are stored inside it. */
export const STRING_ENTRY_BYTES = 16;
export const INLINE_STRING_BYTES = 12;

export interface ColumnBatch {
  rows: number;
  columns: ColumnData[];
  /** UTF-8 bytes of every string longer than INLINE_STRING_BYTES, all columns. */
  strings: Uint8Array;
  /** The long strings: [row, start in `strings`, byte length] per string, column after column. */
  long: Int32Array;
}

export interface ColumnData {
  /** The vector's data: rows × the type's width, or rows × STRING_ENTRY_BYTES for strings. */
  data: Uint8Array;
  /** DuckDB validity mask (bit r of 64-bit word r / 64 set = row r not null); null when no value is null. */
  validity: Uint8Array | null;
  /** This column's long strings: `long` entries [longFrom, longTo) (multiples of 3). */
  longFrom: number;
  longTo: number;
}

type FixedType = Exclude<SpanColumnType, 'VARCHAR' | 'JSON'>;

/** Bytes per value in a vector, by column type. */
export function columnValueBytes(type: SpanColumnType): number {
  switch (type) {
    case 'VARCHAR':
    case 'JSON':
      return STRING_ENTRY_BYTES;
    case 'BIGINT':
    case 'DOUBLE':
      return 8;
    case 'INTEGER':
      return 4;
    case 'BOOLEAN':
    case 'UTINYINT':
    case 'TINYINT':
      return 1;
  }
}

/** Bytes of a validity mask for `rows` rows (64-bit words). */
export const validityMaskBytes = (rows: number): number => Math.ceil(rows / 64) * 8;

interface Output {
  arena: ArrayBuffer;
  /** Next free byte of `arena` (8-aligned). */
  at: number;
  strings: Buffer;
  stringBytes: number;
  long: Int32Array;
  longLength: number;
}

type Rows = readonly Record<string, unknown>[];

/**
 * `row => row.<field>` compiled for one field: a load of a named property keeps an inline cache of
 * its own, where `row[field]` in a writer shared by all columns sees every field at one site.
 */
function getter(field: string): (row: Record<string, unknown>) => unknown {
  return new Function('row', `return row[${JSON.stringify(field)}];`) as (
    row: Record<string, unknown>,
  ) => unknown;
}
type Writer = (rows: Rows, from: number, n: number, out: Output) => ColumnData;

/** A Buffer over an ArrayBuffer of its own (Buffer.allocUnsafe's may share a pool: not transferable). */
const ownBuffer = (bytes: number): Buffer => Buffer.from(new ArrayBuffer(bytes));
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A value the column's type cannot hold: a bug of whoever built the row, refused before DuckDB sees it. */
function mistyped(field: string, row: number, value: unknown, type: SpanColumnType): Error {
  const shown = typeof value === 'string' ? JSON.stringify(value) : `${String(value)} (${typeof value})`;
  return new TypeError(`row ${row + 1}: ${field} is ${shown}, which a ${type} column cannot hold`);
}

function take(out: Output, bytes: number): Uint8Array {
  const view = new Uint8Array(out.arena, out.at, bytes);
  out.at += Math.ceil(bytes / 8) * 8;
  return view;
}

/** The validity mask of `n` rows, taken from the arena on the first null. */
function nullMask(out: Output, n: number, validity: Uint8Array | null, row: number): Uint8Array {
  const mask = validity ?? take(out, validityMaskBytes(n)).fill(0xff);
  mask[row >> 3]! &= ~(1 << (row & 7));
  return mask;
}

function fixedWriter(field: string, type: FixedType): Writer {
  const get = getter(field);
  const width = columnValueBytes(type);
  return (rows, from, n, out) => {
    const data = take(out, n * width);
    let validity: Uint8Array | null = null;
    const offset = data.byteOffset;
    switch (type) {
      case 'BIGINT': {
        const view = new BigInt64Array(out.arena, offset, n);
        for (let r = 0; r < n; r++) {
          const v = get(rows[from + r]!) as bigint | null | undefined;
          if (v === null || v === undefined) validity = nullMask(out, n, validity, r);
          else if (typeof v !== 'bigint' || v < INT64_MIN || v > INT64_MAX)
            throw mistyped(field, from + r, v, type);
          else view[r] = v;
        }
        break;
      }
      case 'DOUBLE': {
        const view = new Float64Array(out.arena, offset, n);
        for (let r = 0; r < n; r++) {
          const v = get(rows[from + r]!) as number | null | undefined;
          if (v === null || v === undefined) validity = nullMask(out, n, validity, r);
          else if (typeof v !== 'number') throw mistyped(field, from + r, v, type);
          else view[r] = v;
        }
        break;
      }
      case 'INTEGER': {
        const view = new Int32Array(out.arena, offset, n);
        for (let r = 0; r < n; r++) {
          const v = get(rows[from + r]!) as number | null | undefined;
          if (v === null || v === undefined) validity = nullMask(out, n, validity, r);
          else if (typeof v !== 'number' || (v | 0) !== v) throw mistyped(field, from + r, v, type);
          else view[r] = v;
        }
        break;
      }
      case 'BOOLEAN': {
        for (let r = 0; r < n; r++) {
          const v = get(rows[from + r]!) as boolean | null | undefined;
          if (v === null || v === undefined) validity = nullMask(out, n, validity, r);
          else if (typeof v !== 'boolean') throw mistyped(field, from + r, v, type);
          else data[r] = v ? 1 : 0;
        }
        break;
      }
      case 'UTINYINT':
      case 'TINYINT': {
        const view = type === 'TINYINT' ? new Int8Array(out.arena, offset, n) : data;
        const fits =
          type === 'TINYINT' ? (v: number) => (v << 24) >> 24 === v : (v: number) => (v & 0xff) === v;
        for (let r = 0; r < n; r++) {
          const v = get(rows[from + r]!) as number | null | undefined;
          if (v === null || v === undefined) validity = nullMask(out, n, validity, r);
          else if (typeof v !== 'number' || !fits(v)) throw mistyped(field, from + r, v, type);
          else view[r] = v;
        }
        break;
      }
    }
    return { data, validity, longFrom: 0, longTo: 0 };
  };
}

/** Up to this many UTF-16 units, an ASCII string is copied in JavaScript; a call to Buffer#write costs more. */
const SHORT_STRING_CHARS = 64;

/** Writes `text` as UTF-8 at `at`; the bytes written. */
function writeShort(target: Buffer, text: string, at: number): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return target.write(text, at);
    target[at + i] = c;
  }
  return text.length;
}

function stringWriter(field: string, type: 'VARCHAR' | 'JSON'): Writer {
  const get = getter(field);
  return (rows, from, n, out) => {
    // The arena is zeroed: an entry's length (≤ 12, so its first byte) is all there is to set.
    const data = take(out, n * STRING_ENTRY_BYTES);
    let validity: Uint8Array | null = null;
    const longFrom = out.longLength;
    for (let r = 0; r < n; r++) {
      const v = get(rows[from + r]!) as string | null | undefined;
      if (v === null || v === undefined) {
        validity = nullMask(out, n, validity, r);
        continue;
      }
      if (typeof v !== 'string') throw mistyped(field, from + r, v, type);
      const entry = r * STRING_ENTRY_BYTES;
      const chars = v.length;
      if (chars <= INLINE_STRING_BYTES) {
        let ascii = true;
        for (let i = 0; i < chars; i++) {
          const c = v.charCodeAt(i);
          if (c > 0x7f) {
            ascii = false;
            break;
          }
          data[entry + 4 + i] = c;
        }
        if (ascii) {
          data[entry] = chars;
          continue;
        }
      }
      // UTF-8 in the shared buffer (3 bytes per UTF-16 unit at most); inline after all if it fits.
      if (out.stringBytes + chars * 3 > out.strings.length) {
        const grown = ownBuffer(Math.max(out.stringBytes + chars * 3, out.strings.length * 2));
        out.strings.copy(grown, 0, 0, out.stringBytes);
        out.strings = grown;
      }
      const start = out.stringBytes;
      const bytes =
        chars <= SHORT_STRING_CHARS ? writeShort(out.strings, v, start) : out.strings.write(v, start);
      data.fill(0, entry, entry + STRING_ENTRY_BYTES);
      if (bytes <= INLINE_STRING_BYTES) {
        data[entry] = bytes;
        data.set(out.strings.subarray(start, start + bytes), entry + 4);
        continue;
      }
      // The entry stays an empty inline string until DuckDB places this one: no entry ever claims
      // more than 12 bytes, so none can point anywhere.
      out.stringBytes = start + bytes;
      if (out.longLength + 3 > out.long.length) {
        const grown = new Int32Array(out.long.length * 2);
        grown.set(out.long);
        out.long = grown;
      }
      out.long[out.longLength++] = r;
      out.long[out.longLength++] = start;
      out.long[out.longLength++] = bytes;
    }
    return { data, validity, longFrom, longTo: out.longLength };
  };
}

/**
 * Builds the column encoder for a row type (`columns` in the table's order): `encode(rows)` lays
 * the rows out COLUMN_BATCH_MAX_ROWS at a time, one ColumnBatch per slice. Throws a TypeError for a
 * value its column's type cannot hold (a string for a number, an integer out of range).
 */
export function createColumnEncoder<Row>(
  columns: readonly { field: keyof Row & string; type: SpanColumnType }[],
): (rows: readonly Row[]) => ColumnBatch[] {
  const writers = columns.map(({ field, type }) =>
    type === 'VARCHAR' || type === 'JSON' ? stringWriter(field, type) : fixedWriter(field, type),
  );
  // Every column's values, and a validity mask for each (each part 8-aligned).
  const rowBytes = columns.reduce((sum, c) => sum + columnValueBytes(c.type), 0);
  return (rows) => {
    const batches: ColumnBatch[] = [];
    const all = rows as unknown as Rows;
    for (let from = 0; from < all.length; from += COLUMN_BATCH_MAX_ROWS) {
      const n = Math.min(COLUMN_BATCH_MAX_ROWS, all.length - from);
      const arenaBytes = columns.length * (validityMaskBytes(n) + 8) + rowBytes * n;
      const out: Output = {
        arena: new ArrayBuffer(arenaBytes),
        at: 0,
        strings: ownBuffer(n * 256),
        stringBytes: 0,
        long: new Int32Array(n * 3 * 4),
        longLength: 0,
      };
      const data = writers.map((write) => write(all, from, n, out));
      batches.push({
        rows: n,
        columns: data,
        strings: new Uint8Array(out.strings.buffer, 0, out.stringBytes),
        long: out.long.slice(0, out.longLength),
      });
    }
    return batches;
  };
}

/** The ArrayBuffers of batches, for postMessage's transfer list (each once). */
export function columnBatchBuffers(batches: readonly ColumnBatch[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const b of batches) {
    buffers.add(b.strings.buffer as ArrayBuffer);
    buffers.add(b.long.buffer as ArrayBuffer);
    for (const c of b.columns) buffers.add(c.data.buffer as ArrayBuffer);
  }
  return [...buffers];
}
