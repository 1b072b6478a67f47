import { describe, expect, it } from 'vitest';
import { createHopClassifier } from './classify-hop.ts';
import {
  COLUMN_BATCH_MAX_ROWS,
  type ColumnBatch,
  INLINE_STRING_BYTES,
  columnBatchBuffers,
  createColumnEncoder,
} from './column-batch.ts';
import { decodeMetricsRequestProtobuf, decodeTraceRequestProtobuf } from './decode-protobuf.ts';
import { encodeMetricsRequestProtobuf } from './encode-metrics-request.ts';
import { encodeTraceRequestProtobuf } from './encode-trace-request.ts';
import {
  fleetMetricsRequest,
  llmdTraceRequest,
  sglangTraceRequest,
  vllmTraceRequest,
} from './fixtures/index.ts';
import { readColumnBatch as readColumnBatchFromIndex } from './index.ts';
import { normalizeMetricsRequest } from './normalize-metrics.ts';
import { normalizeTraceRequest } from './normalize-spans.ts';
import { type ColumnSpec, createColumnReader, readColumnBatch } from './read-column-batch.ts';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanColumnType,
  type SpanRow,
} from './span-row.ts';
import type { DecodedTraceRequest } from './types.ts';

// readColumnBatch is createColumnEncoder backwards: every row that goes through encode → read comes
// back equal, value for value and type for type (bigint, number, boolean, string, null).

const T0 = 1_760_000_000_000_000_000n;
const hex = (i: number, chars: number) => i.toString(16).padStart(chars, '0');
const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

function roundTrip<Row>(rows: readonly Row[], columns: readonly ColumnSpec<Row>[]): Row[] {
  const batches = createColumnEncoder<Row>(columns)(rows);
  return batches.flatMap((batch) => readColumnBatch<Row>(batch, columns));
}

/** Each row has exactly the columns' fields, in the columns' order (one shape for all). */
function expectShape(rows: readonly object[], columns: readonly { field: string }[]): void {
  const fields = columns.map((c) => c.field);
  for (const row of rows) expect(Object.keys(row)).toEqual(fields);
}

describe('readColumnBatch: span and metric rows from real emitters', () => {
  const options = { classifier: createHopClassifier(), aliases: {} };
  /** Through the wire format and the normalizer, as the receivers make them. */
  const normalize = (request: DecodedTraceRequest) =>
    normalizeTraceRequest(decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(request)), options).rows;

  const spanRows: SpanRow[] = [];
  for (let i = 0; i < 300; i++) {
    const startNs = T0 + BigInt(i) * 7_919_000_000n;
    spanRows.push(
      ...normalize(vllmTraceRequest({ traceId: `a${hex(i, 31)}`, startNs, completionTokens: i })),
      ...normalize(sglangTraceRequest({ traceId64: `b${hex(i, 15)}`, startNs, rid: `rid-${i}` })),
      ...normalize(
        llmdTraceRequest({
          traceId: `c${hex(i, 31)}`,
          startNs,
          tenant: `tenant-${i % 7}`,
          pool: `pool-${i % 3}`,
        }),
      ),
    );
  }

  it('gives back every span row of vLLM, SGLang and llm-d traces, over several batches', () => {
    expect(spanRows.length).toBeGreaterThan(2 * COLUMN_BATCH_MAX_ROWS);
    const batches = createColumnEncoder<SpanRow>(SPAN_COLUMNS)(spanRows);
    expect(batches.length).toBeGreaterThan(2);
    const read = batches.flatMap((batch) => readColumnBatch<SpanRow>(batch, SPAN_COLUMNS));
    expect(read).toStrictEqual(spanRows);
    expectShape(read, SPAN_COLUMNS);
    // What the normalizer makes is what a writer will see: bigint times, JSON as its text.
    expect(typeof read[0]!.startNs).toBe('bigint');
    expect(typeof read[0]!.attributes).toBe('string');
  });

  it('gives back every metric point row', () => {
    const pointRows: MetricPointRow[] = [];
    for (let i = 0; i < 450; i++) {
      const request = fleetMetricsRequest(T0 + BigInt(i) * 15_000_000_000n, `pool-${i % 5}`);
      const { rows } = normalizeMetricsRequest(
        decodeMetricsRequestProtobuf(encodeMetricsRequestProtobuf(request)),
        {},
      );
      pointRows.push(...rows);
    }
    expect(pointRows.length).toBeGreaterThan(COLUMN_BATCH_MAX_ROWS);
    const read = roundTrip(pointRows, METRIC_POINT_COLUMNS);
    expect(read).toStrictEqual(pointRows);
    expectShape(read, METRIC_POINT_COLUMNS);
  });

  it('is exported from the package with the column lists', () => {
    const [batch] = createColumnEncoder<SpanRow>(SPAN_COLUMNS)(spanRows.slice(0, 3));
    expect(readColumnBatchFromIndex<SpanRow>(batch!, SPAN_COLUMNS)).toStrictEqual(spanRows.slice(0, 3));
  });
});

// A table of three columns of every type, each value telling its column and row apart (booleans and
// the 1-byte types by pattern), with nulls at different rows in every column: a column read from
// another column's vector, or a row read from another row's offset, cannot come back equal.
const TYPES: SpanColumnType[] = [
  'VARCHAR',
  'JSON',
  'BIGINT',
  'DOUBLE',
  'INTEGER',
  'BOOLEAN',
  'UTINYINT',
  'TINYINT',
];
type WideRow = Record<string, unknown>;
const WIDE: ColumnSpec<WideRow>[] = [0, 1, 2].flatMap((k) =>
  TYPES.map((type) => ({ field: `${type.toLowerCase()}${k}`, type })),
);

/** Strings inline and not, ASCII and not, around the 12-byte limit. */
function stringValue(c: number, r: number): string {
  const id = `${c}.${r}`;
  switch ((r + c) % 9) {
    case 0:
      return id;
    case 1:
      return `${id}:`.padEnd(12, 'x'); // 12 bytes: the longest inline
    case 2:
      return `${id}:`.padEnd(13, 'y'); // 13 bytes: the shortest long string
    case 3:
      return `é${id}`; // inline, not ASCII
    case 4:
      return `${id}日本`.padStart(13, 'z'); // 13 bytes with a 3-byte character across byte 12
    case 5:
      return `trace-${id}-`.padEnd(40, hex(r, 8));
    case 6:
      return `{"row":${r},"column":${c},"emoji":"😀","text":"${'ü'.repeat(r % 30)}"}`;
    case 7:
      return '';
    default:
      return JSON.stringify({ row: r, column: c, attributes: 'a'.repeat(r % 200) });
  }
}

function wideValue(type: SpanColumnType, c: number, r: number): unknown {
  if ((r * 7 + c * 3) % 11 === 0) return c % 2 === 0 ? null : undefined;
  switch (type) {
    case 'VARCHAR':
    case 'JSON':
      return stringValue(c, r);
    case 'BIGINT':
      return (BigInt(c) << 56n) + BigInt(r) * 1_000_003n - (1n << 62n) * BigInt(r % 2);
    case 'DOUBLE':
      return (r % 2 === 0 ? 1 : -1) * (c * 1e6 + r + 1 / (r + 2));
    case 'INTEGER':
      return (c % 2 === 0 ? 1 : -1) * (c * 100_000 + r);
    case 'BOOLEAN':
      return ((r * (c + 3)) >> (c % 4)) % 3 === 0;
    case 'UTINYINT':
      return (r * 7 + c * 37) % 256;
    case 'TINYINT':
      return ((r * 5 + c * 41) % 256) - 128;
  }
}

const encodeWide = createColumnEncoder<WideRow>(WIDE);

function wideRows(count: number): WideRow[] {
  return Array.from({ length: count }, (_, r) =>
    Object.fromEntries(WIDE.map(({ field, type }, c) => [field, wideValue(type, c, r)])),
  );
}

/** What the reader gives for a row the encoder took: undefined is stored, and read back, as null. */
const asRead = (row: Record<string, unknown>) =>
  Object.fromEntries(WIDE.map(({ field }) => [field, row[field] ?? null]));

describe('readColumnBatch: every type at every offset', () => {
  it('reads each column from its own vector and each row from its own offset', () => {
    const rows = wideRows(COLUMN_BATCH_MAX_ROWS + 300);
    const batches = encodeWide(rows);
    expect(batches.map((b) => b.rows)).toEqual([COLUMN_BATCH_MAX_ROWS, 300]);
    const read = batches.flatMap((batch) => readColumnBatch(batch, WIDE));
    expect(read).toStrictEqual(rows.map(asRead));
    expectShape(read, WIDE);
  });

  it('would notice a column read from another column of its type', () => {
    const rows = wideRows(500);
    const [batch] = encodeWide(rows);
    const expected = rows.map(asRead);
    for (let c = 0; c < WIDE.length; c++) {
      const other = (c + TYPES.length) % WIDE.length; // the same type, another column
      const swapped = WIDE.map((column, i) =>
        i === c
          ? { ...column, field: WIDE[other]!.field }
          : i === other
            ? { ...column, field: WIDE[c]!.field }
            : column,
      );
      expect(createColumnReader(swapped)(batch!)).not.toStrictEqual(expected);
    }
  });

  it('reads a batch of one row and one of COLUMN_BATCH_MAX_ROWS rows', () => {
    for (const count of [1, COLUMN_BATCH_MAX_ROWS]) {
      const rows = wideRows(count);
      const batches = encodeWide(rows);
      expect(batches).toHaveLength(1);
      expect(readColumnBatch(batches[0]!, WIDE)).toStrictEqual(rows.map(asRead));
    }
  });

  it('reads null in every column type, at the edges of the validity words', () => {
    const rows = wideRows(COLUMN_BATCH_MAX_ROWS);
    for (const r of [0, 1, 63, 64, 65, 127, 128, 1000, COLUMN_BATCH_MAX_ROWS - 1])
      for (const { field } of WIDE) rows[r]![field] = r % 2 === 0 ? null : undefined;
    const allNull = Object.fromEntries(WIDE.map(({ field }) => [field, null]));
    const [batch] = encodeWide(rows);
    for (const column of batch!.columns) expect(column.validity).not.toBeNull();
    const read = readColumnBatch(batch!, WIDE);
    expect(read).toStrictEqual(rows.map(asRead));
    expect(read[63]).toStrictEqual(allNull);
    expect(read[COLUMN_BATCH_MAX_ROWS - 1]).toStrictEqual(allNull);
    // A row missing every field is a row of nulls too.
    expect(readColumnBatch(encodeWide([{}])[0]!, WIDE)).toStrictEqual([allNull]);
  });

  it('reads batches that were transferred, and vectors that are not aligned', () => {
    const rows = wideRows(200);
    const batches = encodeWide(rows);
    const moved = structuredClone(batches, { transfer: columnBatchBuffers(batches) });
    expect(readColumnBatch(moved[0]!, WIDE)).toStrictEqual(rows.map(asRead));
    // Each vector copied to an odd offset of a buffer of its own.
    const unaligned: ColumnBatch = {
      ...moved[0]!,
      columns: moved[0]!.columns.map((column) => {
        const data = new Uint8Array(new ArrayBuffer(column.data.byteLength + 1), 1);
        data.set(column.data);
        return { ...column, data };
      }),
    };
    expect(readColumnBatch(unaligned, WIDE)).toStrictEqual(rows.map(asRead));
  });

  it('refuses a batch of other columns', () => {
    const [batch] = encodeWide(wideRows(10));
    expect(() => readColumnBatch(batch!, WIDE.slice(1))).toThrow(RangeError);
    const retyped = WIDE.map((c) => (c.type === 'BIGINT' ? { ...c, type: 'INTEGER' as const } : c));
    expect(() => readColumnBatch(batch!, retyped)).toThrow(/bigint0 has 80 bytes for 10 INTEGER values/);
  });
});

interface Edge {
  text: string | null;
  json: string | null;
  big: bigint | null;
  real: number | null;
  int: number | null;
  flag: boolean | null;
  small: number | null;
  signed: number | null;
}
const EDGE_COLUMNS: ColumnSpec<Edge>[] = [
  { field: 'text', type: 'VARCHAR' },
  { field: 'json', type: 'JSON' },
  { field: 'big', type: 'BIGINT' },
  { field: 'real', type: 'DOUBLE' },
  { field: 'int', type: 'INTEGER' },
  { field: 'flag', type: 'BOOLEAN' },
  { field: 'small', type: 'UTINYINT' },
  { field: 'signed', type: 'TINYINT' },
];
const edge = (partial: Partial<Edge>): Edge => ({
  text: 'x',
  json: '{}',
  big: 0n,
  real: 0,
  int: 0,
  flag: false,
  small: 0,
  signed: 0,
  ...partial,
});

describe('readColumnBatch: edge values', () => {
  it('reads strings of 12 and 13 bytes, ASCII and not, on either side of the inline limit', () => {
    const texts = [
      'a'.repeat(12),
      'a'.repeat(13),
      'é'.repeat(6), // 12 bytes inline, 6 characters
      `${'é'.repeat(6)}a`, // 13 bytes
      `${'a'.repeat(11)}é`, // 13 bytes: é across byte 12
      `${'a'.repeat(10)}é`, // 12 bytes
      `${'a'.repeat(9)}日`, // 12 bytes
      `${'a'.repeat(10)}日`, // 13 bytes: 日 across byte 12
      '日本日本', // 12 bytes
      '日本日本語', // 15 bytes
      `${'a'.repeat(8)}😀`, // 12 bytes, a surrogate pair inline
      `${'a'.repeat(9)}😀`, // 13 bytes
      `${'a'.repeat(11)}😀`, // 15 bytes: the emoji across byte 12
      '😀😀😀', // 12 bytes
      '😀😀😀😀', // 16 bytes
      '',
      ' ',
      'a\u0000b',
      `${'\u0000'.repeat(12)}`,
      '\u007f'.repeat(13),
      '\u0080',
      '\ufeffbom', // a byte order mark is a character like any other
      `\ufeff${'long'.repeat(5)}`,
      `é${'x'.repeat(300)}`,
      'x'.repeat(5000),
    ];
    expect(texts.filter((t) => utf8Bytes(t) === INLINE_STRING_BYTES).length).toBeGreaterThanOrEqual(6);
    expect(texts.filter((t) => utf8Bytes(t) === INLINE_STRING_BYTES + 1).length).toBeGreaterThanOrEqual(5);
    const rows = texts.map((t, i) => edge({ text: t, json: texts[texts.length - 1 - i]! }));
    expect(roundTrip(rows, EDGE_COLUMNS)).toStrictEqual(rows);
    // One string per batch too: a column's only long string, or none.
    for (const row of rows) expect(roundTrip([row], EDGE_COLUMNS)).toStrictEqual([row]);
  });

  it('reads long strings whether all of a column is ASCII or not', () => {
    const ascii = Array.from({ length: 50 }, (_, i) => edge({ text: `ascii-${i}-`.padEnd(20 + i, 'q') }));
    expect(roundTrip(ascii, EDGE_COLUMNS)).toStrictEqual(ascii);
    const mixed = [...ascii, edge({ text: `${'ü'.repeat(20)}` }), ...ascii];
    expect(roundTrip(mixed, EDGE_COLUMNS)).toStrictEqual(mixed);
  });

  it('reads a lone surrogate as U+FFFD, as the encoder stored it', () => {
    const [row] = roundTrip([edge({ text: 'a\ud800b', json: `${'x'.repeat(20)}\udc00` })], EDGE_COLUMNS);
    expect(row!.text).toBe('a\ufffdb');
    expect(row!.json).toBe(`${'x'.repeat(20)}\ufffd`);
  });

  it('reads integers at their limits and doubles that are not finite', () => {
    const rows = [
      edge({ big: 2n ** 63n - 1n, real: Number.NaN, int: 2 ** 31 - 1, small: 255, signed: 127, flag: true }),
      edge({ big: -(2n ** 63n), real: Number.POSITIVE_INFINITY, int: -(2 ** 31), small: 0, signed: -128 }),
      edge({ big: 2n ** 53n + 1n, real: Number.NEGATIVE_INFINITY, int: -1, signed: -1 }),
      edge({ big: -(2n ** 53n) - 3n, real: -0, int: 1 }),
      edge({ big: -1n, real: Number.MIN_VALUE, flag: true }),
      edge({ big: 1_767_225_600_123_456_789n, real: Number.MAX_VALUE }),
      edge({
        big: null,
        real: null,
        int: null,
        flag: null,
        small: null,
        signed: null,
        text: null,
        json: null,
      }),
    ];
    const read = roundTrip(rows, EDGE_COLUMNS);
    expect(read).toStrictEqual(rows);
    expect(Number.isNaN(read[0]!.real)).toBe(true);
    expect(Object.is(read[3]!.real, -0)).toBe(true);
    expect(read[2]!.big).toBe(9_007_199_254_740_993n);
  });
});
