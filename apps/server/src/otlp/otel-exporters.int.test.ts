import { type IncomingHttpHeaders, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as HttpProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './start-test-governor.ts';

// The real OpenTelemetry JS exporters as clients, through the public endpoints, read back with
// POST /api/sql. A recording proxy in front of OTLP/HTTP shows what each exporter put on the wire.

let t: TestGovernor;
let proxyUrl: string;
let closeProxy: () => Promise<void>;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  t = await startTestGovernor();
  const target = new URL(t.url);
  const proxy = createServer((req, res) => {
    seen.push(req.headers);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  closeProxy = () =>
    new Promise<void>((resolve) => {
      proxy.closeAllConnections();
      proxy.close(() => resolve());
    });
});
afterAll(async () => {
  await closeProxy?.();
  await t?.close();
});

/** Emits one gateway → vLLM trace through `exporter` and returns its trace id. */
async function emitTrace(exporter: SpanExporter, service: string): Promise<string> {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.instance.id': `${service}-7` }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('governor-tests', '1.0.0');
  const startMs = Date.now() - 2_000;
  const root = tracer.startSpan('gateway.request', {
    kind: SpanKind.SERVER,
    startTime: startMs,
    attributes: {
      'gen_ai.request.model': 'meta-llama/Llama-3.1-8B-Instruct',
      'governor.pool': 'pool-a',
      'governor.tenant': 'acme',
      'governor.priority': 2,
      'gen_ai.response.time_to_first_chunk': 0.25,
    },
  });
  const traceId = root.spanContext().traceId;
  const { trace, context } = await import('@opentelemetry/api');
  const child = tracer.startSpan(
    'llm_request',
    {
      kind: SpanKind.SERVER,
      startTime: startMs + 5,
      attributes: {
        'gen_ai.usage.prompt_tokens': 1200,
        'gen_ai.usage.completion_tokens': 80,
        'gen_ai.latency.time_to_first_token': 0.2,
        'gen_ai.latency.time_in_queue': 0.05,
        'gen_ai.response.finish_reasons': '["stop"]',
      },
    },
    trace.setSpan(context.active(), root),
  );
  child.addEvent('first_token', {}, startMs + 205);
  child.setStatus({ code: SpanStatusCode.OK });
  child.end(startMs + 900);
  root.end(startMs + 1000);
  await provider.forceFlush();
  await provider.shutdown();
  return traceId;
}

async function readTrace(traceId: string) {
  const rows = await t.sql(
    `SELECT name, service, hop, kind, is_root, model, pool, tenant, priority, replica, input_tokens, output_tokens,
            ttft_ms, server_ttft_ms, queue_ms, finish_reasons, outcome, duration_ms, first_token_ns - start_ns
     FROM spans WHERE trace_id = '${traceId}' ORDER BY start_ns`,
  );
  return rows.map((r) => ({
    name: r[0],
    service: r[1],
    hop: r[2],
    kind: r[3],
    isRoot: r[4],
    model: r[5],
    pool: r[6],
    tenant: r[7],
    priority: r[8],
    replica: r[9],
    inputTokens: r[10],
    outputTokens: r[11],
    ttftMs: r[12],
    serverTtftMs: r[13],
    queueMs: r[14],
    finishReasons: r[15],
    outcome: r[16],
    durationMs: r[17],
    firstTokenAfterNs: r[18],
  }));
}

function expectTheTrace(spans: Awaited<ReturnType<typeof readTrace>>, service: string) {
  expect(spans).toHaveLength(2);
  const [gateway, runtime] = spans as [(typeof spans)[0], (typeof spans)[0]];
  expect(gateway).toMatchObject({
    name: 'gateway.request',
    service,
    hop: 'gateway',
    kind: 2,
    isRoot: true,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    pool: 'pool-a',
    tenant: 'acme',
    priority: 2,
    ttftMs: 250,
    durationMs: 1000,
    firstTokenAfterNs: 250_000_000,
    outcome: 'success',
  });
  expect(runtime).toMatchObject({
    name: 'llm_request',
    hop: 'runtime',
    isRoot: false,
    replica: `${service}-7`,
    inputTokens: 1200,
    outputTokens: 80,
    serverTtftMs: 200,
    queueMs: 50,
    finishReasons: '["stop"]',
    firstTokenAfterNs: 200_000_000,
  });
}

describe('real OpenTelemetry exporters', () => {
  it('exporter-trace-otlp-http (JSON)', async () => {
    const before = seen.length;
    const traceId = await emitTrace(new HttpJsonTraceExporter({ url: `${proxyUrl}/v1/traces` }), 'svc-json');
    expect(seen.slice(before).map((h) => h['content-type'])).toContain('application/json');
    expectTheTrace(await readTrace(traceId), 'svc-json');
  });

  it('exporter-trace-otlp-proto with gzip compression', async () => {
    const before = seen.length;
    const exporter = new HttpProtoTraceExporter({
      url: `${proxyUrl}/v1/traces`,
      compression: 'gzip' as ConstructorParameters<typeof HttpProtoTraceExporter>[0] extends infer C
        ? C extends { compression?: infer A }
          ? A
          : never
        : never,
    });
    const traceId = await emitTrace(exporter, 'svc-proto');
    const headers = seen.slice(before);
    expect(headers.map((h) => h['content-type'])).toContain('application/x-protobuf');
    expect(headers.map((h) => h['content-encoding'])).toContain('gzip');
    expectTheTrace(await readTrace(traceId), 'svc-proto');
  });

  it('exporter-trace-otlp-grpc', async () => {
    const exporter = new GrpcTraceExporter({ url: `http://127.0.0.1:${t.governor.grpcPort}` });
    const traceId = await emitTrace(exporter, 'svc-grpc');
    expectTheTrace(await readTrace(traceId), 'svc-grpc');
  });

  it('exporter-metrics-otlp-http: gauge, sum and histogram land in metric_points', async () => {
    const exporter = new OTLPMetricExporter({ url: `${proxyUrl}/v1/metrics` });
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'vllm-metrics' }),
      readers: [reader],
    });
    const meter = provider.getMeter('vllm');
    const labels = { 'governor.pool': 'pool-m', model_name: 'llama' };
    meter.createGauge('vllm:kv_cache_usage_perc').record(0.75, labels);
    const counter = meter.createCounter('vllm:generation_tokens_total');
    counter.add(100, labels);
    counter.add(23, labels);
    const histogram = meter.createHistogram('vllm:time_to_first_token_seconds', {
      unit: 's',
      advice: { explicitBucketBoundaries: [0.1, 0.5, 1] },
    });
    for (const v of [0.05, 0.2, 0.3, 2]) histogram.record(v, labels);
    // shutdown() collects and exports once more; a forceFlush() before it would export twice.
    await provider.shutdown();
    const rows = await t.sql(
      `SELECT name, type, value, count, sum, min, max, bucket_counts, explicit_bounds, is_monotonic, pool, model, service
       FROM metric_points WHERE service = 'vllm-metrics' ORDER BY name`,
    );
    expect(rows).toEqual([
      [
        'vllm:generation_tokens_total',
        'sum',
        123,
        null,
        null,
        null,
        null,
        null,
        null,
        true,
        'pool-m',
        'llama',
        'vllm-metrics',
      ],
      [
        'vllm:kv_cache_usage_perc',
        'gauge',
        0.75,
        null,
        null,
        null,
        null,
        null,
        null,
        false,
        'pool-m',
        'llama',
        'vllm-metrics',
      ],
      [
        'vllm:time_to_first_token_seconds',
        'histogram',
        null,
        4,
        2.55,
        0.05,
        2,
        '[1,2,0,1]',
        '[0.1,0.5,1]',
        false,
        'pool-m',
        'llama',
        'vllm-metrics',
      ],
    ]);
  });
});
