import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHopClassifier } from './classify-hop.ts';
import { decodeMetricsRequestJson } from './decode-json.ts';
import { decodeTraceRequestJson } from './decode-json.ts';
import { decodeMetricsRequestProtobuf, decodeTraceRequestProtobuf } from './decode-protobuf.ts';
import { encodeMetricsRequestProtobuf } from './encode-metrics-request.ts';
import { encodeTraceRequestProtobuf } from './encode-trace-request.ts';
import {
  fleetMetricsRequest,
  llmdTraceRequest,
  metricsRequestToJson,
  sglangTraceRequest,
  traceRequestToJson,
  vllmTraceRequest,
} from './fixtures/index.ts';
import { normalizeMetricsRequest } from './normalize-metrics.ts';
import { normalizeTraceRequest } from './normalize-spans.ts';
import { OtlpDecodeError } from './types.ts';

// Whatever arrives on the wire, the decoders either decode it or throw OtlpDecodeError (which the
// receivers answer with 400) — never a RangeError, TypeError or a hang — and normalization of
// anything that decoded never throws.

const T0 = 1_760_000_000_000_000_000n;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const classifier = createHopClassifier([{ hop: 'tool', attribute: 'tool.name' }]);
const aliases = { 'my.pool': 'governor.pool' };

const validTraceProtobuf = [
  encodeTraceRequestProtobuf(vllmTraceRequest({ traceId: TRACE, startNs: T0 })),
  encodeTraceRequestProtobuf(llmdTraceRequest({ traceId: TRACE, startNs: T0 })),
  encodeTraceRequestProtobuf(sglangTraceRequest({ traceId64: '00f067aa0ba902b7', startNs: T0 })),
];
const validTraceJson = [
  traceRequestToJson(vllmTraceRequest({ traceId: TRACE, startNs: T0 })),
  traceRequestToJson(llmdTraceRequest({ traceId: TRACE, startNs: T0 })),
];
const validMetricsProtobuf = [encodeMetricsRequestProtobuf(fleetMetricsRequest(T0))];
const validMetricsJson = [metricsRequestToJson(fleetMetricsRequest(T0))];

/** Runs `decode`; passes when it returns or throws OtlpDecodeError. */
function decodesOrRefuses(decode: () => void): boolean {
  try {
    decode();
    return true;
  } catch (error) {
    if (error instanceof OtlpDecodeError) return true;
    throw error;
  }
}

type Mutation =
  | { kind: 'flip'; at: number; value: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'duplicate'; at: number; count: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 16 }) }),
  fc.record({
    kind: fc.constant('duplicate' as const),
    at: fc.nat(),
    count: fc.integer({ min: 1, max: 64 }),
  }),
);

function mutate(input: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let bytes = Array.from(input);
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % bytes.length;
    if (m.kind === 'flip') bytes[at] = m.value;
    else if (m.kind === 'truncate') bytes = bytes.slice(0, at);
    else if (m.kind === 'insert') bytes.splice(at, 0, ...m.bytes);
    else if (m.kind === 'delete') bytes.splice(at, m.count);
    else bytes.splice(at, 0, ...bytes.slice(at, at + m.count));
  }
  return Uint8Array.from(bytes);
}

const mutatedFrom = (valid: readonly Uint8Array[]) =>
  fc
    .tuple(fc.constantFrom(...valid), fc.array(mutation, { minLength: 1, maxLength: 6 }))
    .map(([bytes, ms]) => mutate(bytes, ms));

/** JSON-level mutations: replace any value in the tree with another JSON value. */
function mutateJson(text: string, paths: readonly number[], replacement: unknown): string {
  const root = JSON.parse(text) as unknown;
  let node: unknown = root;
  let parent: Record<string, unknown> | unknown[] | null = null;
  let key: string | number | null = null;
  for (const step of paths) {
    if (node === null || typeof node !== 'object') break;
    const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) break;
    key = keys[step % keys.length]!;
    parent = node as Record<string, unknown>;
    node = (node as Record<string, unknown>)[key as string];
  }
  if (parent !== null && key !== null) (parent as Record<string, unknown>)[key as string] = replacement;
  return JSON.stringify(root);
}

const anyJson = fc.jsonValue({ maxDepth: 3 });

describe('decoders on hostile input (property)', () => {
  it('protobuf traces: random bytes decode or throw OtlpDecodeError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) =>
        decodesOrRefuses(() =>
          normalizeTraceRequest(decodeTraceRequestProtobuf(bytes), { classifier, aliases }),
        ),
      ),
      { numRuns: 1000 },
    );
  });

  it('protobuf traces: mutated valid requests decode or throw OtlpDecodeError', () => {
    fc.assert(
      fc.property(mutatedFrom(validTraceProtobuf), (bytes) =>
        decodesOrRefuses(() =>
          normalizeTraceRequest(decodeTraceRequestProtobuf(bytes), { classifier, aliases }),
        ),
      ),
      { numRuns: 1500 },
    );
  });

  it('protobuf metrics: random and mutated bytes decode or throw OtlpDecodeError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 512 }), mutatedFrom(validMetricsProtobuf)), (bytes) =>
        decodesOrRefuses(() => normalizeMetricsRequest(decodeMetricsRequestProtobuf(bytes), aliases)),
      ),
      { numRuns: 1500 },
    );
  });

  it('JSON traces: random text, mutated bytes and mutated values decode or throw OtlpDecodeError', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      anyJson.map((v) => JSON.stringify(v)),
      mutatedFrom(validTraceJson.map((t) => Buffer.from(t))).map((b) => Buffer.from(b).toString('utf8')),
      fc
        .tuple(fc.constantFrom(...validTraceJson), fc.array(fc.nat(), { maxLength: 12 }), anyJson)
        .map(([t, path, value]) => mutateJson(t, path, value)),
    );
    fc.assert(
      fc.property(text, (body) =>
        decodesOrRefuses(() => normalizeTraceRequest(decodeTraceRequestJson(body), { classifier, aliases })),
      ),
      { numRuns: 1500 },
    );
  });

  it('JSON metrics: mutated values decode or throw OtlpDecodeError', () => {
    const text = fc.oneof(
      anyJson.map((v) => JSON.stringify(v)),
      fc
        .tuple(fc.constantFrom(...validMetricsJson), fc.array(fc.nat(), { maxLength: 14 }), anyJson)
        .map(([t, path, value]) => mutateJson(t, path, value)),
    );
    fc.assert(
      fc.property(text, (body) =>
        decodesOrRefuses(() => normalizeMetricsRequest(decodeMetricsRequestJson(body), aliases)),
      ),
      { numRuns: 1500 },
    );
  });

  it('valid requests still decode after the mutation harness leaves them untouched', () => {
    expect(decodeTraceRequestProtobuf(mutate(validTraceProtobuf[0]!, [])).resourceSpans).toHaveLength(1);
  });
});
