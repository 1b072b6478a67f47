import * as grpc from '@grpc/grpc-js';
import { type DecodedTraceRequest, encodeTraceRequestProtobuf } from '@governor/otlp';
import { llmdSpanIds, llmdTraceRequest, sglangTraceRequest, vllmTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './start-test-governor.ts';

// What vLLM, SGLang and llm-d really send, through the public receivers, checked column by column
// after ingest. The server runs with config aliases and an extra hop rule, which must apply too.

let t: TestGovernor;
let client: grpc.Client;
let traceSeq = 0;
const now = () => BigInt(Date.now()) * 1_000_000n;
const newTraceId = () => `5a1e${(++traceSeq).toString(16).padStart(4, '0')}${'c0ffee'.repeat(4)}`;

beforeAll(async () => {
  t = await startTestGovernor({
    attribute_aliases: { 'k8s.deployment.name': 'governor.pool', 'acme.customer': 'governor.tenant' },
    hop_rules: [
      { hop: 'tool', span_name: '^mcp\\.' },
      { hop: 'cache', service_name: '^lmcache' },
    ],
  });
  client = new grpc.Client(`127.0.0.1:${t.governor.grpcPort}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await t?.close();
});

function exportViaGrpc(request: DecodedTraceRequest | Buffer): Promise<Buffer> {
  const body = Buffer.isBuffer(request) ? request : Buffer.from(encodeTraceRequestProtobuf(request));
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      (error, response) => (error ? reject(error) : resolve(response!)),
    );
  });
}

async function exportViaHttp(request: DecodedTraceRequest): Promise<void> {
  const response = await fetch(`${t.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: Buffer.from(encodeTraceRequestProtobuf(request)),
  });
  expect(response.status).toBe(200);
}

async function columns(traceId: string, select: string): Promise<Record<string, unknown>[]> {
  const names = select.split(',').map((c) => c.trim().split(/\s+/).at(-1)!);
  const rows = await t.sql(
    `SELECT ${select} FROM spans WHERE trace_id = '${traceId}' ORDER BY start_ns, span_id`,
  );
  return rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
}

describe('vLLM over OTLP/gRPC', () => {
  it('stores llm_request with TTFT, queue, prefill and decode in ms, tokens, finish reasons and outcome', async () => {
    const traceId = newTraceId();
    const response = await exportViaGrpc(
      vllmTraceRequest({
        traceId,
        startNs: now(),
        parentSpanId: 'aaaaaaaaaaaaaaaa',
        queueS: 0.02,
        ttftS: 0.15,
        prefillS: 0.12,
        decodeS: 2.5,
        promptTokens: 4000,
        completionTokens: 500,
        finishReason: 'length',
        instanceId: 'vllm-h100-3',
      }),
    );
    expect(response).toHaveLength(0);
    const [row] = await columns(
      traceId,
      'name, kind, service, hop, is_root, parent_span_id, model, replica, input_tokens, output_tokens, server_ttft_ms, ttft_ms, queue_ms, prefill_ms, decode_ms, duration_ms, finish_reasons, outcome, task_id',
    );
    expect(row).toEqual({
      name: 'llm_request',
      kind: 2,
      service: 'vllm',
      hop: 'runtime',
      is_root: false,
      parent_span_id: 'aaaaaaaaaaaaaaaa',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      replica: 'vllm-h100-3',
      input_tokens: 4000,
      output_tokens: 500,
      server_ttft_ms: 150,
      ttft_ms: null,
      queue_ms: 20,
      prefill_ms: 120,
      decode_ms: 2500,
      duration_ms: 2640,
      finish_reasons: '["length"]',
      outcome: 'success',
      task_id: traceId,
    });
  });

  it('answers INVALID_ARGUMENT to an undecodable message and keeps serving', async () => {
    await expect(exportViaGrpc(Buffer.from([0x0a, 0xff, 0xff]))).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/cannot decode OTLP protobuf traces/),
    });
    const traceId = newTraceId();
    await exportViaGrpc(vllmTraceRequest({ traceId, startNs: now() }));
    expect(await t.count(`SELECT count(*) FROM spans WHERE trace_id = '${traceId}'`)).toBe(1);
  });

  it('returns partial success for invalid spans over gRPC too', async () => {
    const traceId = newTraceId();
    const request = vllmTraceRequest({ traceId, startNs: now() });
    const good = request.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    request.resourceSpans[0]!.scopeSpans[0]!.spans.push({
      ...good,
      spanId: 'bbbbbbbbbbbbbbbb',
      endNs: good.startNs - 1n,
    });
    const response = await exportViaGrpc(request);
    expect(response.length).toBeGreaterThan(0);
    expect(response.toString('latin1')).toMatch(/1 spans rejected/);
    expect(await t.count(`SELECT count(*) FROM spans WHERE trace_id = '${traceId}'`)).toBe(1);
  });
});

describe('SGLang', () => {
  it('stores Req <rid> root spans with 64-bit trace ids and classifies the stages', async () => {
    const traceId64 = `77${(++traceSeq).toString(16).padStart(14, '0')}`;
    await exportViaGrpc(sglangTraceRequest({ traceId64, startNs: now(), rid: 'rid-9' }));
    const rows = await columns(
      `${'0'.repeat(16)}${traceId64}`,
      'name, hop, is_root, replica, model, outcome',
    );
    expect(rows).toEqual([
      {
        name: 'Req rid-9',
        hop: 'runtime',
        is_root: true,
        replica: 'sglang-node-3',
        model: null,
        outcome: 'success',
      },
      {
        name: 'Tokenize',
        hop: 'runtime',
        is_root: false,
        replica: 'sglang-node-3',
        model: null,
        outcome: 'success',
      },
      {
        name: 'Schedule',
        hop: 'scheduler',
        is_root: false,
        replica: 'sglang-node-3',
        model: null,
        outcome: 'success',
      },
      {
        name: 'Prefill Forward',
        hop: 'prefill',
        is_root: false,
        replica: 'sglang-node-3',
        model: null,
        outcome: 'success',
      },
      {
        name: 'Decode Loop',
        hop: 'decode',
        is_root: false,
        replica: 'sglang-node-3',
        model: null,
        outcome: 'success',
      },
      {
        name: 'Detokenize',
        hop: 'runtime',
        is_root: false,
        replica: 'sglang-node-3',
        model: null,
        outcome: 'success',
      },
    ]);
  });
});

describe('llm-d', () => {
  it('classifies gateway, EPP scheduling and P/D proxy spans and keeps the vLLM timings of both sides', async () => {
    const traceId = newTraceId();
    await exportViaHttp(llmdTraceRequest({ traceId, startNs: now(), tenant: 'initech', pool: 'llama-pd' }));
    const ids = llmdSpanIds(traceId);
    const rows = await columns(
      traceId,
      'span_id, name, hop, pool, tenant, ttft_ms, server_ttft_ms, prefill_ms, decode_ms',
    );
    const by = Object.fromEntries(rows.map((r) => [r.span_id as string, r]));
    expect(by[ids.gateway]).toMatchObject({
      name: 'gateway.request',
      hop: 'gateway',
      tenant: 'initech',
      ttft_ms: 131,
    });
    expect(by[ids.eppSchedule]).toMatchObject({
      name: 'llm_d.epp.scheduler.schedule',
      hop: 'router',
      pool: 'llama-pd',
    });
    expect(by[ids.eppScorer]).toMatchObject({ hop: 'router' });
    expect(by[ids.pdRequest]).toMatchObject({
      name: 'llm_d.pd_proxy.request',
      hop: 'router',
      pool: 'llama-pd',
    });
    expect(by[ids.pdPrefill]).toMatchObject({ name: 'llm_d.pd_proxy.prefill', hop: 'prefill' });
    expect(by[ids.pdDecode]).toMatchObject({ name: 'llm_d.pd_proxy.decode', hop: 'decode' });
    expect(by[ids.vllmPrefill]).toMatchObject({ hop: 'runtime', server_ttft_ms: 108, prefill_ms: 101 });
    expect(by[ids.vllmDecode]).toMatchObject({ hop: 'runtime', decode_ms: 1270 });
  });
});

describe('configuration: attribute_aliases and hop_rules', () => {
  it('maps aliased attributes, applies extra hop rules, and keeps unclassified spans with hop NULL', async () => {
    const traceId = newTraceId();
    const startNs = now();
    const span = (i: number, name: string, attributes: Record<string, string> = {}) => ({
      traceId,
      spanId: `${(i + 1).toString(16).padStart(16, 'c')}`,
      parentSpanId: '',
      traceState: '',
      name,
      kind: 1,
      startNs: startNs + BigInt(i) * 1_000_000n,
      endNs: startNs + BigInt(i + 1) * 1_000_000n,
      attributes,
      events: [],
      linkCount: 0,
      statusCode: 0,
      statusMessage: '',
    });
    await exportViaHttp({
      resourceSpans: [
        {
          resource: { 'service.name': 'agent', 'k8s.deployment.name': 'pool-from-k8s' },
          scopeSpans: [
            {
              scope: { name: 'agent', version: '' },
              spans: [span(0, 'mcp.tools/call', { 'acme.customer': 'hooli' }), span(1, 'plan-next-step')],
            },
          ],
        },
        {
          resource: { 'service.name': 'lmcache-server' },
          scopeSpans: [{ scope: { name: 'lmcache', version: '' }, spans: [span(2, 'lookup')] }],
        },
      ],
    });
    expect(await columns(traceId, 'name, hop, pool, tenant')).toEqual([
      { name: 'mcp.tools/call', hop: 'tool', pool: 'pool-from-k8s', tenant: 'hooli' },
      { name: 'plan-next-step', hop: null, pool: 'pool-from-k8s', tenant: null },
      { name: 'lookup', hop: 'cache', pool: null, tenant: null },
    ]);
  });
});
