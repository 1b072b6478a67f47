import { createHash } from 'node:crypto';
import type {
  AttributeValue,
  Attributes,
  DecodedMetricsRequest,
  DecodedSpan,
  DecodedTraceRequest,
} from '@governor/otlp';

// Builders for OTLP exports with known answers: a request is laid out hop by hop, so its TTFT,
// e2e latency and hop times are known exactly and tests compare Governor's signals against them.

/** 2026-01-01T00:00:00Z in ns; fixtures place events relative to it, in milliseconds. */
export const BASE_NS = 1_767_225_600_000_000_000n;

export function atMs(ms: number): bigint {
  return BASE_NS + BigInt(Math.round(ms * 1e6));
}

export function hexId(text: string, length: 16 | 32): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

export interface SpanSpec {
  key: string;
  parent?: string;
  name: string;
  service: string;
  startMs: number;
  endMs: number;
  attributes?: Attributes;
  firstTokenMs?: number;
  error?: boolean;
}

/** One export holding the given spans of a trace, grouped by service into resource spans. */
export function traceExport(traceKey: string, spans: readonly SpanSpec[], resource: Attributes = {}): DecodedTraceRequest {
  const traceId = hexId(`trace:${traceKey}`, 32);
  const byService = new Map<string, DecodedSpan[]>();
  for (const s of spans) {
    const span: DecodedSpan = {
      traceId,
      spanId: hexId(`span:${traceKey}:${s.key}`, 16),
      parentSpanId: s.parent ? hexId(`span:${traceKey}:${s.parent}`, 16) : '',
      traceState: '',
      name: s.name,
      kind: 2,
      startNs: atMs(s.startMs),
      endNs: atMs(s.endMs),
      attributes: s.attributes ?? {},
      events: s.firstTokenMs === undefined ? [] : [{ timeNs: atMs(s.firstTokenMs), name: 'first_token', attributes: {} }],
      linkCount: 0,
      statusCode: s.error ? 2 : 1,
      statusMessage: s.error ? 'failed' : '',
    };
    const list = byService.get(s.service) ?? [];
    list.push(span);
    byService.set(s.service, list);
  }
  return {
    resourceSpans: [...byService].map(([service, list]) => ({
      resource: { 'service.name': service, ...resource },
      scopeSpans: [{ scope: { name: 'governor-test', version: '1' }, spans: list }],
    })),
  };
}

export function traceIdOf(traceKey: string): string {
  return hexId(`trace:${traceKey}`, 32);
}

export function mergeExports(exports: readonly DecodedTraceRequest[]): DecodedTraceRequest {
  return { resourceSpans: exports.flatMap((e) => e.resourceSpans) };
}

export interface ChatRequestSpec {
  trace: string;
  startMs: number;
  /** Gateway time before routing and after the runtime returns. */
  gatewayBeforeMs?: number;
  gatewayAfterMs?: number;
  routerMs?: number;
  queueMs: number;
  prefillMs: number;
  decodeMs: number;
  pool?: string;
  model?: string;
  region?: string;
  gpuType?: string;
  tenant?: string;
  priority?: number;
  replica?: string;
  workflow?: { id: string; type?: string; step?: number; steps?: number };
  attempt?: number;
  outcome?: 'success' | 'error' | 'timeout' | 'rejected' | 'preempted' | 'cancelled';
  inputTokens?: number;
  outputTokens?: number;
  cacheHit?: boolean;
  costUsd?: number;
  /** Shift the runtime's clock: its spans start this much earlier than the gateway thinks. */
  runtimeSkewMs?: number;
}

export interface ChatRequestTruth {
  traceId: string;
  startMs: number;
  endMs: number;
  e2eMs: number;
  ttftMs: number;
  hops: { gateway: number; router: number; queue: number; prefill: number; decode: number };
  runtimeMs: number;
}

/**
 * A request the way a gateway-fronted vLLM fleet traces it: gateway root → router, and the runtime
 * span (llm_request) with scheduler, prefill and decode children; the first token at the end of
 * prefill. Returns the spans and the exact answers.
 */
export function chatRequest(spec: ChatRequestSpec): { spans: SpanSpec[]; truth: ChatRequestTruth } {
  const gBefore = spec.gatewayBeforeMs ?? 2;
  const gAfter = spec.gatewayAfterMs ?? 1;
  const router = spec.routerMs ?? 1;
  const t0 = spec.startMs;
  const r0 = t0 + gBefore + router;
  const firstToken = r0 + spec.queueMs + spec.prefillMs;
  const r1 = firstToken + spec.decodeMs;
  const end = r1 + gAfter;
  const skew = spec.runtimeSkewMs ?? 0;
  const rootAttributes: Attributes = compact({
    'gen_ai.request.model': spec.model,
    'governor.pool': spec.pool,
    'governor.region': spec.region,
    'governor.gpu.type': spec.gpuType,
    'governor.tenant': spec.tenant,
    'governor.priority': spec.priority,
    'governor.workflow.id': spec.workflow?.id,
    'governor.workflow.type': spec.workflow?.type,
    'governor.workflow.step': spec.workflow?.step,
    'governor.workflow.steps': spec.workflow?.steps,
    'governor.attempt': spec.attempt,
    'governor.outcome': spec.outcome,
    'gen_ai.usage.input_tokens': spec.inputTokens,
    'gen_ai.usage.output_tokens': spec.outputTokens,
    'governor.cache.hit': spec.cacheHit,
    'governor.cost.usd': spec.costUsd,
  });
  const failed = spec.outcome !== undefined && spec.outcome !== 'success' && spec.outcome !== 'cancelled';
  const spans: SpanSpec[] = [
    {
      key: 'gateway',
      name: 'POST /v1/chat/completions',
      service: 'gateway',
      startMs: t0,
      endMs: end,
      attributes: rootAttributes,
      firstTokenMs: firstToken,
      error: failed,
    },
    { key: 'router', parent: 'gateway', name: 'route', service: 'router', startMs: t0 + gBefore, endMs: r0 },
    {
      key: 'runtime',
      parent: 'gateway',
      name: 'llm_request',
      service: 'vllm',
      startMs: r0 - skew,
      endMs: r1 - skew,
      attributes: compact({
        'governor.pool': spec.pool,
        'governor.replica': spec.replica,
        'gen_ai.request.model': spec.model,
      }),
    },
    { key: 'queue', parent: 'runtime', name: 'scheduler.queue', service: 'vllm', startMs: r0 - skew, endMs: r0 + spec.queueMs - skew },
    {
      key: 'prefill',
      parent: 'runtime',
      name: 'prefill',
      service: 'vllm',
      startMs: r0 + spec.queueMs - skew,
      endMs: firstToken - skew,
    },
    { key: 'decode', parent: 'runtime', name: 'decode', service: 'vllm', startMs: firstToken - skew, endMs: r1 - skew },
  ];
  return {
    spans,
    truth: {
      traceId: traceIdOf(spec.trace),
      startMs: t0,
      endMs: end,
      e2eMs: end - t0,
      ttftMs: firstToken - t0,
      hops: { gateway: gBefore + gAfter, router, queue: spec.queueMs, prefill: spec.prefillMs, decode: spec.decodeMs },
      runtimeMs: r1 - r0,
    },
  };
}

export interface GaugeSpec {
  name: string;
  pool: string;
  points: readonly { atMs: number; value: number; attributes?: Attributes }[];
}

export function gaugeExport(gauges: readonly GaugeSpec[]): DecodedMetricsRequest {
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'fleet-exporter' },
        scopeMetrics: [
          {
            scope: { name: 'governor-test', version: '1' },
            metrics: gauges.map((g) => ({
              name: g.name,
              description: '',
              unit: '',
              type: 'gauge' as const,
              isMonotonic: false,
              temporality: 0,
              points: g.points.map((p) => ({
                attributes: { 'governor.pool': g.pool, ...(p.attributes ?? {}) },
                startNs: 0n,
                timeNs: atMs(p.atMs),
                value: p.value,
                count: null,
                sum: null,
                min: null,
                max: null,
                bucketCounts: null,
                explicitBounds: null,
                quantiles: null,
              })),
            })),
          },
        ],
      },
    ],
  };
}

/** Linear interpolation between closest ranks — the definition DuckDB's quantile_cont uses. */
export function quantileCont(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

function compact(attrs: Record<string, AttributeValue | undefined>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) out[k] = v;
  return out;
}
