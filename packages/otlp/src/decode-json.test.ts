import { describe, expect, it } from 'vitest';
import { decodeMetricsRequestJson, decodeTraceRequestJson } from './decode-json.ts';
import {
  fleetMetricsRequest,
  llmdTraceRequest,
  metricsRequestToJson,
  traceRequestToJson,
  vllmTraceRequest,
} from './fixtures/index.ts';
import { OtlpDecodeError } from './types.ts';

const T0 = 1_760_000_000_000_000_000n;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

function oneSpan(span: Record<string, unknown>): string {
  return JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] });
}

describe('decodeTraceRequestJson', () => {
  it('reads what the OpenTelemetry JS exporters write', () => {
    for (const request of [
      vllmTraceRequest({ traceId: TRACE, startNs: T0 }),
      llmdTraceRequest({ traceId: TRACE, startNs: T0 }),
    ]) {
      expect(decodeTraceRequestJson(traceRequestToJson(request))).toEqual(request);
    }
  });

  it('accepts snake_case keys, enum names, numeric 64-bit integers and base64 ids', () => {
    const body = JSON.stringify({
      resource_spans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { string_value: 'vllm' } }] },
          scope_spans: [
            {
              scope: { name: 'vllm' },
              spans: [
                {
                  trace_id: Buffer.from(TRACE, 'hex').toString('base64'),
                  span_id: 'AAAAAAAAAAE=',
                  name: 'llm_request',
                  kind: 'SPAN_KIND_SERVER',
                  start_time_unix_nano: 1_700_000_000_000_000_000,
                  end_time_unix_nano: '1700000000500000000',
                  attributes: [
                    { key: 'n', value: { int_value: 42 } },
                    { key: 'big', value: { intValue: '9223372036854775807' } },
                    { key: 'flag', value: { boolValue: true } },
                    { key: 'raw', value: { bytesValue: 'AQI=' } },
                    { key: 'list', value: { arrayValue: { values: [{ doubleValue: 0.5 }] } } },
                    {
                      key: 'map',
                      value: { kvlistValue: { values: [{ key: 'a', value: { stringValue: 'b' } }] } },
                    },
                  ],
                  status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
                },
              ],
            },
          ],
        },
      ],
    });
    const span = decodeTraceRequestJson(body).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(span).toMatchObject({
      traceId: TRACE,
      spanId: '0000000000000001',
      kind: 2,
      startNs: 1_700_000_000_000_000_000n,
      endNs: 1_700_000_000_500_000_000n,
      statusCode: 2,
      statusMessage: 'boom',
      attributes: {
        n: 42,
        big: '9223372036854775807',
        flag: true,
        raw: 'AQI=',
        list: [0.5],
        map: { a: 'b' },
      },
    });
  });

  it('keeps an attribute named __proto__ as data', () => {
    const body = oneSpan({ traceId: TRACE, attributes: [{ key: '__proto__', value: { stringValue: 'x' } }] });
    const attributes = decodeTraceRequestJson(body).resourceSpans[0]!.scopeSpans[0]!.spans[0]!.attributes;
    expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(attributes, '__proto__')?.value).toBe('x');
  });

  it('ignores unknown fields', () => {
    const body = oneSpan({ traceId: TRACE, spanId: '00f067aa0ba902b7', name: 'x', futureField: { a: [1] } });
    expect(decodeTraceRequestJson(body).resourceSpans[0]!.scopeSpans[0]!.spans[0]!.name).toBe('x');
  });

  it('marks a malformed id or time on one span as invalid instead of failing the request', () => {
    const body = oneSpan({ traceId: 'not-hex', spanId: '00f067aa0ba902b7', startTimeUnixNano: 'soon' });
    const span = decodeTraceRequestJson(body).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(span.traceId).toBe('invalid');
    expect(span.startNs).toBe(-1n);
  });

  it.each([
    ['not JSON', '{"resourceSpans": ['],
    ['a JSON array', '[]'],
    ['resourceSpans not an array', '{"resourceSpans": {}}'],
    ['scopeSpans not an array', '{"resourceSpans": [{"scopeSpans": 3}]}'],
    ['a resourceSpans entry that is not an object', '{"resourceSpans": [7]}'],
  ])('throws OtlpDecodeError for %s', (_what, body) => {
    expect(() => decodeTraceRequestJson(body)).toThrow(OtlpDecodeError);
  });
});

describe('decodeMetricsRequestJson', () => {
  it('reads gauges, sums, histograms and summaries', () => {
    const request = fleetMetricsRequest(T0);
    expect(decodeMetricsRequestJson(metricsRequestToJson(request))).toEqual(request);
  });

  it('throws OtlpDecodeError for a body that is not an export request', () => {
    expect(() => decodeMetricsRequestJson('{"resourceMetrics": "gauge"}')).toThrow(OtlpDecodeError);
    expect(() => decodeMetricsRequestJson('null')).toThrow(OtlpDecodeError);
  });
});
