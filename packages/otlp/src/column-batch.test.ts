import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COLUMN_BATCH_MAX_ROWS,
  type ColumnBatch,
  INLINE_STRING_BYTES,
  STRING_ENTRY_BYTES,
  columnBatchBuffers,
  columnValueBytes,
  createColumnEncoder,
  validityMaskBytes,
} from './column-batch.ts';
import type { SpanColumnType } from './span-row.ts';

// The layout is read back here the way DuckDB reads a vector (duckdb_string_t, validity words), so
// a row that went through the encoder is the row that went in.

const COLUMNS = [
  { field: 'text', column: 'text', type: 'VARCHAR' },
  { field: 'json', column: 'json', type: 'JSON' },
  { field: 'big', column: 'big', type: 'BIGINT' },
  { field: 'real', column: 'real', type: 'DOUBLE' },
  { field: 'int', column: 'int', type: 'INTEGER' },
  { field: 'flag', column: 'flag', type: 'BOOLEAN' },
  { field: 'small', column: 'small', type: 'UTINYINT' },
  { field: 'signed', column: 'signed', type: 'TINYINT' },
] as const satisfies readonly { field: string; column: string; type: SpanColumnType }[];

interface Row {
  text: string | null;
  json: string | null;
  big: bigint | null;
  real: number | null;
  int: number | null;
  flag: boolean | null;
  small: number | null;
  signed: number | null;
}

const encode = createColumnEncoder<Row>(COLUMNS);
const utf8 = new TextDecoder('utf-8', { fatal: true });

function readBack(batch: ColumnBatch): Row[] {
  const rows: Row[] = Array.from({ length: batch.rows }, () => ({}) as Row);
  COLUMNS.forEach(({ field, type }, c) => {
    const column = batch.columns[c]!;
    expect(column.data.byteLength).toBe(batch.rows * columnValueBytes(type));
    if (column.validity) expect(column.validity.byteLength).toBe(validityMaskBytes(batch.rows));
    const view = new DataView(column.data.buffer, column.data.byteOffset, column.data.byteLength);
    const long = new Map<number, string>();
    for (let i = column.longFrom; i < column.longTo; i += 3) {
      const [row, start, bytes] = [batch.long[i]!, batch.long[i + 1]!, batch.long[i + 2]!];
      expect(bytes).toBeGreaterThan(INLINE_STRING_BYTES);
      long.set(row, utf8.decode(batch.strings.subarray(start, start + bytes)));
    }
    for (let r = 0; r < batch.rows; r++) {
      const valid = !column.validity || (column.validity[r >> 3]! & (1 << (r & 7))) !== 0;
      let value: unknown = null;
      if (valid) {
        if (type === 'VARCHAR' || type === 'JSON') {
          const entry = r * STRING_ENTRY_BYTES;
          const length = view.getUint32(entry, true);
          // No entry may claim more than its inline bytes: DuckDB would follow its pointer.
          expect(length).toBeLessThanOrEqual(INLINE_STRING_BYTES);
          value = long.get(r) ?? utf8.decode(column.data.subarray(entry + 4, entry + 4 + length));
        } else if (type === 'BIGINT') value = view.getBigInt64(r * 8, true);
        else if (type === 'DOUBLE') value = view.getFloat64(r * 8, true);
        else if (type === 'INTEGER') value = view.getInt32(r * 4, true);
        else if (type === 'BOOLEAN') value = view.getUint8(r) === 1;
        else if (type === 'UTINYINT') value = view.getUint8(r);
        else value = view.getInt8(r);
      }
      (rows[r] as unknown as Record<string, unknown>)[field] = value;
    }
  });
  return rows;
}

/** Strings around the inline limit, ASCII and not (á is 2 bytes, 😀 4). */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', 'a'.repeat(12), 'a'.repeat(13), 'á'.repeat(6), 'á'.repeat(7), `${'a'.repeat(11)}😀`),
  fc.string({ minLength: 60, maxLength: 70 }),
  fc.string({ minLength: 300, maxLength: 900 }),
);
const row: fc.Arbitrary<Row> = fc.record({
  text: fc.option(text),
  json: fc.option(text),
  big: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  real: fc.option(fc.double()),
  int: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  flag: fc.option(fc.boolean()),
  small: fc.option(fc.integer({ min: 0, max: 255 })),
  signed: fc.option(fc.integer({ min: -128, max: 127 })),
});

/** What a string is after UTF-8 (a lone surrogate becomes U+FFFD, as in every UTF-8 store). */
const asUtf8 = (r: Row): Row => ({
  ...r,
  text: r.text === null ? null : utf8.decode(new TextEncoder().encode(r.text)),
  json: r.json === null ? null : utf8.decode(new TextEncoder().encode(r.json)),
});

describe('column batches', () => {
  it('hold every row as it was: nulls, integers at their limits, strings inline and not', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 150 }), (rows) => {
        const batches = encode(rows);
        expect(batches).toHaveLength(1);
        expect(readBack(batches[0]!)).toEqual(rows.map(asUtf8));
      }),
      { numRuns: 150 },
    );
  });

  it('split more rows than a DataChunk holds, in order', () => {
    const rows: Row[] = Array.from({ length: COLUMN_BATCH_MAX_ROWS * 2 + 5 }, (_, i) => ({
      text: `trace-${i.toString(16).padStart(32, '0')}`,
      json: i % 3 === 0 ? null : `{"i":${i}}`,
      big: BigInt(i) * 1_000_000_007n,
      real: i / 7,
      int: i,
      flag: i % 2 === 0,
      small: i % 256,
      signed: (i % 256) - 128,
    }));
    const batches = encode(rows);
    expect(batches.map((b) => b.rows)).toEqual([COLUMN_BATCH_MAX_ROWS, COLUMN_BATCH_MAX_ROWS, 5]);
    expect(batches.flatMap(readBack)).toEqual(rows);
  });

  it('can be transferred whole: every part is over an ArrayBuffer of its own', () => {
    const batches = encode([
      { text: 'x'.repeat(40), json: null, big: 1n, real: 1, int: 1, flag: true, small: 1, signed: 1 },
    ]);
    const buffers = columnBatchBuffers(batches);
    const copy = structuredClone(batches, { transfer: buffers });
    expect(readBack(copy[0]!)[0]!.text).toBe('x'.repeat(40));
    expect(batches[0]!.strings.byteLength).toBe(0); // detached: moved, not copied
  });

  it('refuse a value its column cannot hold, naming the row and the field', () => {
    const good: Row = { text: 'a', json: '{}', big: 1n, real: 1, int: 1, flag: true, small: 1, signed: 1 };
    const bad: [Partial<Record<keyof Row, unknown>>, RegExp][] = [
      [{ int: 'high' }, /row 2: int is "high"/],
      [{ int: 1.5 }, /int is 1\.5/],
      [{ int: 2 ** 31 }, /int is 2147483648/],
      [{ int: 3n }, /int is 3 \(bigint\)/],
      [{ small: 3n }, /small is 3 \(bigint\)/],
      [{ small: 256 }, /small is 256/],
      [{ signed: -129 }, /signed is -129/],
      [{ big: 2n ** 63n }, /big is 9223372036854775808/],
      [{ big: 5 }, /big is 5 \(number\)/],
      [{ real: '1' }, /real is "1"/],
      [{ flag: 1 }, /flag is 1/],
      [{ text: 42 }, /text is 42/],
    ];
    for (const [change, message] of bad)
      expect(() => encode([good, { ...good, ...change } as Row])).toThrow(message);
  });
});
