import { describe, expect, it } from 'vitest';
import { decodeMetricsRequestProtobuf, decodeTraceRequestProtobuf } from './decode-protobuf.ts';
import { encodeMetricsRequestProtobuf } from './encode-metrics-request.ts';
import { encodeTraceRequestProtobuf } from './encode-trace-request.ts';
import {
  fleetMetricsRequest,
  llmdTraceRequest,
  sglangTraceRequest,
  syntheticTraceRequest,
  vllmTraceRequest,
} from './fixtures/index.ts';
import { ProtobufWriter } from './protobuf-writer.ts';
import { type DecodedTraceRequest, OtlpDecodeError } from './types.ts';

const T0 = 1_760_000_000_000_000_000n;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('decodeTraceRequestProtobuf', () => {
  it.each<[string, DecodedTraceRequest]>([
    ['vLLM', vllmTraceRequest({ traceId: TRACE, startNs: T0 })],
    ['SGLang', sglangTraceRequest({ traceId64: '00f067aa0ba902b7', startNs: T0 })],
    ['llm-d', llmdTraceRequest({ traceId: TRACE, startNs: T0 })],
    ['synthetic', syntheticTraceRequest({ spans: 40, seed: 3, startNs: T0 })],
  ])('reads back what was encoded (%s)', (_name, request) => {
    expect(decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(request))).toEqual(request);
  });

  it('keeps 64-bit trace ids as 32 hex characters with 8 leading zero bytes', () => {
    const decoded = decodeTraceRequestProtobuf(
      encodeTraceRequestProtobuf(sglangTraceRequest({ traceId64: '00f067aa0ba902b7', startNs: T0 })),
    );
    expect(decoded.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.traceId).toBe(
      '000000000000000000f067aa0ba902b7',
    );
  });

  it('skips unknown fields and known fields with an unexpected wire type', () => {
    const span = new ProtobufWriter()
      .bytes(1, Buffer.from(TRACE, 'hex'))
      .uint(99, 12345) // unknown varint
      .string(100, 'future field') // unknown length-delimited
      .fixed64(101, 7n) // unknown fixed64
      .uint(5, 1) // name as a varint: wrong wire type, skipped
      .string(5, 'llm_request')
      .fixed64(7, T0)
      .bytesOut();
    const bytes = new ProtobufWriter()
      .uint(42, 1)
      .message(1, (rs) => rs.message(2, (ss) => ss.bytes(2, span)))
      .bytesOut();
    const decoded = decodeTraceRequestProtobuf(bytes).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(decoded.name).toBe('llm_request');
    expect(decoded.traceId).toBe(TRACE);
    expect(decoded.startNs).toBe(T0);
  });

  it('refuses attribute values nested deeper than 32 levels', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 40; i++) value = [value];
    const request: DecodedTraceRequest = {
      resourceSpans: [{ resource: { deep: value as never }, scopeSpans: [] }],
    };
    expect(() => decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(request))).toThrow(OtlpDecodeError);
  });

  it('keeps an attribute named __proto__ as data, without touching the object prototype', () => {
    // JSON.parse makes "__proto__" an own key, as a decoder must.
    const resource = JSON.parse('{"__proto__": {"polluted": true}, "service.name": "x"}');
    const request: DecodedTraceRequest = { resourceSpans: [{ resource, scopeSpans: [] }] };
    const decoded = decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(request)).resourceSpans[0]!
      .resource;
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect((decoded as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(
      JSON.parse('{"__proto__": {"polluted": true}, "service.name": "x"}'),
    );
  });

  it('reads an empty body as an empty request', () => {
    expect(decodeTraceRequestProtobuf(new Uint8Array())).toEqual({ resourceSpans: [] });
  });
});

describe('decodeMetricsRequestProtobuf', () => {
  it('reads back gauges, sums, histograms and summaries', () => {
    const request = fleetMetricsRequest(T0);
    expect(decodeMetricsRequestProtobuf(encodeMetricsRequestProtobuf(request))).toEqual(request);
  });
});
