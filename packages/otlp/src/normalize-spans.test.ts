import { describe, expect, it } from 'vitest';
import { createHopClassifier } from './classify-hop.ts';
import { decodeTraceRequestProtobuf } from './decode-protobuf.ts';
import { encodeTraceRequestProtobuf } from './encode-trace-request.ts';
import { llmdSpanIds, llmdTraceRequest, sglangTraceRequest, vllmTraceRequest } from './fixtures/index.ts';
import { normalizeTraceRequest } from './normalize-spans.ts';
import type { SpanRow } from './span-row.ts';
import type { DecodedSpan, DecodedTraceRequest } from './types.ts';

const T0 = 1_760_000_000_000_000_000n;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const defaults = { classifier: createHopClassifier(), aliases: {} };

/** Through the wire format, as the receivers see it. */
function normalize(request: DecodedTraceRequest, options = defaults) {
  return normalizeTraceRequest(decodeTraceRequestProtobuf(encodeTraceRequestProtobuf(request)), options);
}

function span(partial: Partial<DecodedSpan>): DecodedSpan {
  return {
    traceId: TRACE,
    spanId: '00f067aa0ba902b7',
    parentSpanId: '',
    traceState: '',
    name: 'work',
    kind: 1,
    startNs: T0,
    endNs: T0 + 5_000_000n,
    attributes: {},
    events: [],
    linkCount: 0,
    statusCode: 0,
    statusMessage: '',
    ...partial,
  };
}

function requestOf(spans: DecodedSpan[], resource: Record<string, string> = { 'service.name': 'svc' }) {
  return { resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 's', version: '' }, spans }] }] };
}

describe('normalizeTraceRequest: what real emitters send', () => {
  it('vLLM llm_request: runtime hop, float seconds to ms, prompt/completion tokens, JSON-string finish reasons', () => {
    const { rows, rejected } = normalize(vllmTraceRequest({ traceId: TRACE, startNs: T0 }));
    expect(rejected).toBe(0);
    const row = rows[0]!;
    expect(row).toMatchObject({
      traceId: TRACE,
      name: 'llm_request',
      kind: 2,
      service: 'vllm',
      hop: 'runtime',
      isRoot: true,
      parentSpanId: null,
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      replica: 'vllm-0',
      inputTokens: 1843,
      outputTokens: 212,
      ttftMs: null,
      finishReasons: '["stop"]',
      outcome: 'success',
      taskId: TRACE,
      scope: 'vllm.llm_engine',
    });
    expect(row.serverTtftMs).toBeCloseTo(84, 6);
    expect(row.queueMs).toBeCloseTo(12, 6);
    expect(row.prefillMs).toBeCloseTo(61, 6);
    expect(row.decodeMs).toBeCloseTo(1250, 6);
    expect(row.durationMs).toBeCloseTo(1323, 6);
    expect(row.firstTokenNs).toBe(T0 + 84_000_000n);
    expect(JSON.parse(row.attributes)['gen_ai.request.id']).toBe('cmpl-5f1c0ad2e8b54c21a7');
  });

  it('vLLM: an aborted request is cancelled, an error status is an error', () => {
    const aborted = normalize(vllmTraceRequest({ traceId: TRACE, startNs: T0, finishReason: 'abort' }))
      .rows[0]!;
    expect(aborted.outcome).toBe('cancelled');
    const failed = vllmTraceRequest({ traceId: TRACE, startNs: T0 });
    const s = failed.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    s.statusCode = 2;
    s.attributes['error.type'] = 'DeadlineExceeded';
    expect(normalize(failed).rows[0]!.outcome).toBe('timeout');
  });

  it('SGLang: root Req <rid> span with a 64-bit trace id, stage children classified, no gen_ai.*', () => {
    const { rows, rejected } = normalize(
      sglangTraceRequest({ traceId64: '00f067aa0ba902b7', startNs: T0, rid: 'r42' }),
    );
    expect(rejected).toBe(0);
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['Req r42']).toMatchObject({
      traceId: '000000000000000000f067aa0ba902b7',
      hop: 'runtime',
      isRoot: true,
      replica: 'sglang-node-3',
      model: null,
      inputTokens: null,
      outcome: 'success',
    });
    expect(byName.Schedule!.hop).toBe('scheduler');
    expect(byName['Prefill Forward']!.hop).toBe('prefill');
    expect(byName['Decode Loop']!.hop).toBe('decode');
    // No name rule: the service-name fallback (sglang → runtime).
    expect(byName.Tokenize!.hop).toBe('runtime');
    expect(rows.filter((r) => !r.isRoot).every((r) => r.parentSpanId === byName['Req r42']!.spanId)).toBe(
      true,
    );
  });

  it('llm-d: gateway, EPP scheduling, P/D proxy and both vLLM sides', () => {
    const ids = llmdSpanIds(TRACE);
    const { rows } = normalize(llmdTraceRequest({ traceId: TRACE, startNs: T0, tenant: 'acme' }));
    const bySpan = new Map(rows.map((r) => [r.spanId, r]));
    const hop = (id: string) => bySpan.get(id)!.hop;
    expect(rows).toHaveLength(8);
    expect(hop(ids.gateway)).toBe('gateway');
    expect(hop(ids.eppSchedule)).toBe('router');
    expect(hop(ids.eppScorer)).toBe('router');
    expect(hop(ids.pdRequest)).toBe('router');
    expect(hop(ids.pdPrefill)).toBe('prefill');
    expect(hop(ids.pdDecode)).toBe('decode');
    expect(hop(ids.vllmPrefill)).toBe('runtime');
    expect(hop(ids.vllmDecode)).toBe('runtime');
    const gateway = bySpan.get(ids.gateway)!;
    expect(gateway).toMatchObject({
      isRoot: true,
      tenant: 'acme',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
    });
    expect(gateway.ttftMs).toBeCloseTo(131, 6);
    expect(gateway.firstTokenNs).toBe(T0 + 131_000_000n);
    expect(bySpan.get(ids.vllmPrefill)).toMatchObject({ replica: 'prefill-0', finishReasons: '["length"]' });
    expect(bySpan.get(ids.vllmDecode)).toMatchObject({ replica: 'decode-2', outputTokens: 256 });
    expect(bySpan.get(ids.vllmDecode)!.decodeMs).toBeCloseTo(1270, 6);
    expect(bySpan.get(ids.pdRequest)!.pool).toBe('llama-8b-h100');
  });
});

describe('normalizeTraceRequest: conventions and config', () => {
  it('keeps a span no rule classifies, with hop null', () => {
    const { rows } = normalize(requestOf([span({ name: 'charge-card' })], { 'service.name': 'billing' }));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hop).toBeNull();
  });

  it('an explicit governor.hop wins over every rule', () => {
    const { rows } = normalize(
      requestOf([span({ name: 'llm_request', attributes: { 'governor.hop': 'cache' } })]),
    );
    expect(rows[0]!.hop).toBe('cache');
  });

  it('applies attribute aliases to span and resource attributes, without overriding the real name', () => {
    const options = {
      classifier: createHopClassifier(),
      aliases: { 'k8s.pool': 'governor.pool', 'acme.customer': 'governor.tenant' },
    };
    const request = requestOf(
      [
        span({ spanId: '0000000000000001', attributes: { 'k8s.pool': 'p-from-alias' } }),
        span({ spanId: '0000000000000002', attributes: { 'k8s.pool': 'alias', 'governor.pool': 'real' } }),
      ],
      { 'service.name': 'svc', 'acme.customer': 'globex' },
    );
    const { rows } = normalize(request, options);
    expect(rows.map((r) => r.pool)).toEqual(['p-from-alias', 'real']);
    expect(rows.map((r) => r.tenant)).toEqual(['globex', 'globex']);
    // The raw attributes stay as sent.
    expect(JSON.parse(rows[0]!.attributes)).toEqual({ 'k8s.pool': 'p-from-alias' });
  });

  it('applies extra hop rules before the defaults', () => {
    const options = {
      classifier: createHopClassifier([
        { hop: 'tool', spanName: '^mcp\\.' },
        { hop: 'cache', serviceName: '^lmcache$' },
        { hop: 'router', attribute: 'route.decision', attributeEquals: 'sticky' },
      ]),
      aliases: {},
    };
    const rows = [
      ...normalize(requestOf([span({ name: 'mcp.call' })]), options).rows,
      ...normalize(requestOf([span({ name: 'llm_request' })], { 'service.name': 'lmcache' }), options).rows,
      ...normalize(requestOf([span({ name: 'pick', attributes: { 'route.decision': 'sticky' } })]), options)
        .rows,
      ...normalize(requestOf([span({ name: 'pick', attributes: { 'route.decision': 'random' } })]), options)
        .rows,
    ];
    expect(rows.map((r) => r.hop)).toEqual(['tool', 'cache', 'router', null]);
  });

  it('takes the task from the workflow, else the conversation, else the trace; retries from resend_count', () => {
    const { rows } = normalize(
      requestOf([
        span({
          spanId: '0000000000000001',
          attributes: { 'governor.workflow.id': 'wf-1', 'gen_ai.conversation.id': 'c' },
        }),
        span({ spanId: '0000000000000002', attributes: { 'gen_ai.conversation.id': 'conv-9' } }),
        span({ spanId: '0000000000000003', attributes: { 'http.request.resend_count': 2 } }),
      ]),
    );
    expect(rows.map((r) => r.taskId)).toEqual(['wf-1', 'conv-9', TRACE]);
    expect(rows[2]!.attempt).toBe(3);
  });

  it("reads retries from the OpenAI SDK's x-stainless-retry-count header as a gateway captures it", () => {
    const { rows } = normalize(
      requestOf([
        // HTTP semconv: a captured request header is a string array.
        span({
          spanId: '0000000000000001',
          attributes: { 'http.request.header.x-stainless-retry-count': ['2'] },
        }),
        // An Envoy custom tag: a string. A first attempt sends 0.
        span({
          spanId: '0000000000000002',
          attributes: { 'http.request.header.x-stainless-retry-count': '0' },
        }),
        span({
          spanId: '0000000000000003',
          attributes: { 'http.request.header.x-stainless-retry-count': ['x'] },
        }),
        span({
          spanId: '0000000000000004',
          attributes: { 'governor.attempt': 5, 'http.request.header.x-stainless-retry-count': ['1'] },
        }),
      ]),
    );
    // A value that is not a count says nothing: the attempt stays unknown.
    expect(rows.map((r) => r.attempt)).toEqual([3, 1, null, 5]);
  });

  it('coerces loosely typed values and never throws on odd ones', () => {
    const { rows } = normalize(
      requestOf([
        span({
          attributes: {
            'governor.priority': '2',
            'governor.cache.hit': 'true',
            'governor.kv_cache.usage': 'lots',
            'gen_ai.usage.input_tokens': 1e12,
            'gen_ai.response.finish_reasons': ['stop', 'length'],
          },
        }),
      ]),
    );
    expect(rows[0]).toMatchObject({
      priority: 2,
      cacheHit: true,
      kvUsage: null,
      inputTokens: null,
      finishReasons: '["stop","length"]',
    });
  });
});

describe('normalizeTraceRequest: invalid spans', () => {
  it('rejects bad ids and times, keeps the valid neighbours, and says why', () => {
    const valid = span({ spanId: '0000000000000001', name: 'ok' });
    const { rows, rejected, problems } = normalize(
      requestOf([
        valid,
        span({ traceId: 'abcd', name: 'short-trace' }),
        span({ traceId: '0'.repeat(32), name: 'zero-trace' }),
        span({ spanId: '0'.repeat(16), name: 'zero-span' }),
        span({ parentSpanId: 'abc', name: 'bad-parent' }),
        span({ endNs: T0 - 1n, name: 'ends-early' }),
        span({ startNs: 0n, endNs: 0n, name: 'no-start' }),
      ]),
    );
    expect(rows.map((r: SpanRow) => r.name)).toEqual(['ok']);
    expect(rejected).toBe(6);
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/trace_id must be 16 non-zero bytes/);
    expect(problems.join('\n')).toMatch(/span_id must be 8 non-zero bytes/);
  });
});
