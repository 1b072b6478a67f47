import { describe, expect, it } from 'vitest';
import { createHopClassifier } from './classify-hop.ts';
import {
  createFleetIdentity,
  gpuTypeFromProduct,
  samplingProbabilityFromTraceState,
} from './fleet-identity.ts';
import { normalizeMetricsRequest } from './normalize-metrics.ts';
import { normalizeTraceRequest } from './normalize-spans.ts';
import type { AttributeValue, DecodedSpan } from './types.ts';

const T0 = 1_760_000_000_000_000_000n;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

// Resources as the Collector's k8sattributes processor leaves them.
const vllmPod = {
  'service.name': 'vllm',
  'k8s.namespace.name': 'llm',
  'k8s.deployment.name': 'vllm-llama8b',
  'k8s.pod.name': 'vllm-llama8b-7d9f6c5b4-x2x9q',
  'k8s.node.name': 'gpu-node-1',
};
const gatewayPod = {
  'service.name': 'inference-gateway',
  'k8s.deployment.name': 'inference-gateway',
  'k8s.pod.name': 'inference-gateway-5c7b9d8f6-abcde',
};

function span(partial: Partial<DecodedSpan>): DecodedSpan {
  return {
    traceId: TRACE,
    spanId: '00f067aa0ba902b7',
    parentSpanId: '',
    traceState: '',
    name: 'llm_request',
    kind: 2,
    startNs: T0,
    endNs: T0 + 900_000_000n,
    attributes: {},
    events: [],
    linkCount: 0,
    statusCode: 0,
    statusMessage: '',
    ...partial,
  };
}

function normalizeOne(
  s: DecodedSpan,
  resource: Record<string, AttributeValue>,
  pools: { name: string; match?: Record<string, string> }[] = [{ name: 'vllm-llama8b' }],
) {
  const identity = createFleetIdentity({ pools, gpuTypes: ['H100', 'A100'] });
  const { rows } = normalizeTraceRequest(
    { resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'vllm', version: '' }, spans: [s] }] }] },
    { classifier: createHopClassifier(), aliases: {}, identity },
  );
  return rows[0]!;
}

describe('pool and replica from the attributes Kubernetes fleets carry', () => {
  it('a configured pool matches the runtime pod whose deployment has its name; the replica is the pod', () => {
    const row = normalizeOne(span({}), vllmPod);
    expect(row.pool).toBe('vllm-llama8b');
    expect(row.replica).toBe('vllm-llama8b-7d9f6c5b4-x2x9q');
  });

  it('pools[].match wins over the name, and reads span or resource attributes', () => {
    const pools = [{ name: 'llama-8b', match: { 'k8s.deployment.name': 'vllm-llama8b' } }];
    expect(normalizeOne(span({}), vllmPod, pools).pool).toBe('llama-8b');
    const byLabel = [{ name: 'chat', match: { 'inference.pool': 'chat-pool' } }];
    expect(normalizeOne(span({}), { ...vllmPod, 'inference.pool': 'chat-pool' }, byLabel).pool).toBe('chat');
  });

  it('the gateway span gets no pool and no replica: its deployment is not a pool', () => {
    const row = normalizeOne(span({ name: 'POST /v1/chat/completions' }), gatewayPod);
    expect(row.hop).toBe('gateway');
    expect(row.pool).toBeNull();
    expect(row.replica).toBeNull();
  });

  it('without Kubernetes, service.name names the pool and service.instance.id the replica', () => {
    const row = normalizeOne(span({}), {
      'service.name': 'vllm-llama8b',
      'service.instance.id': 'vm-3:8000',
    });
    expect(row.pool).toBe('vllm-llama8b');
    expect(row.replica).toBe('vm-3:8000');
  });

  it('a GPU product name resolves to the pricing key it contains', () => {
    expect(gpuTypeFromProduct('NVIDIA H100 80GB HBM3', ['H100', 'A100'])).toBe('H100');
    expect(gpuTypeFromProduct('NVIDIA A100-SXM4-80GB', ['H100', 'A100'])).toBe('A100');
    expect(gpuTypeFromProduct('NVIDIA L40S', [])).toBe('L40S');
    const row = normalizeOne(span({}), {
      ...vllmPod,
      'k8s.node.label.nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
    });
    expect(row.gpuType).toBe('H100');
  });

  it('metric points: the pod label (DCGM, relabelled scrapes) names the replica; the target resource names the pool', () => {
    const identity = createFleetIdentity({ pools: [{ name: 'vllm-llama8b' }] });
    const point = (attributes: Record<string, AttributeValue>) => ({
      attributes,
      startNs: 0n,
      timeNs: T0,
      value: 1,
      count: null,
      sum: null,
      min: null,
      max: null,
      bucketCounts: null,
      explicitBounds: null,
      quantiles: null,
    });
    const metric = (name: string, attributes: Record<string, AttributeValue>) => ({
      name,
      description: '',
      unit: '',
      type: 'gauge' as const,
      isMonotonic: false,
      temporality: 0,
      points: [point(attributes)],
    });
    const { rows } = normalizeMetricsRequest(
      {
        resourceMetrics: [
          {
            resource: { ...vllmPod, 'service.instance.id': '10.0.0.7:8000' },
            scopeMetrics: [{ scope: { name: '', version: '' }, metrics: [metric('up', {})] }],
          },
          {
            resource: { 'service.name': 'dcgm-exporter', 'k8s.pod.name': 'dcgm-exporter-abcde' },
            scopeMetrics: [
              {
                scope: { name: '', version: '' },
                metrics: [metric('DCGM_FI_DEV_GPU_UTIL', { pod: 'vllm-llama8b-7d9f6c5b4-x2x9q', gpu: '0' })],
              },
            ],
          },
        ],
      },
      {},
      identity,
    );
    expect(rows.map((r) => [r.name, r.pool, r.replica])).toEqual([
      ['up', 'vllm-llama8b', 'vllm-llama8b-7d9f6c5b4-x2x9q'],
      ['DCGM_FI_DEV_GPU_UTIL', null, 'vllm-llama8b-7d9f6c5b4-x2x9q'],
    ]);
  });
});

describe('outcomes by the standards', () => {
  const outcomeOf = (partial: Partial<DecodedSpan>, resource: Record<string, AttributeValue> = gatewayPod) =>
    normalizeOne(span({ name: 'POST /v1/chat/completions', ...partial }), resource).outcome;

  it('HTTP 429 and 503 from a gateway are rejections, other 5xx errors, 4xx with unset status still failures', () => {
    expect(outcomeOf({ attributes: { 'http.response.status_code': 429 } })).toBe('rejected');
    expect(outcomeOf({ attributes: { 'http.response.status_code': 503 }, statusCode: 2 })).toBe('rejected');
    expect(outcomeOf({ attributes: { 'http.response.status_code': 500 }, statusCode: 2 })).toBe('error');
    expect(outcomeOf({ attributes: { 'http.response.status_code': 504 }, statusCode: 2 })).toBe('timeout');
    expect(outcomeOf({ attributes: { 'http.response.status_code': 400 } })).toBe('error');
    expect(outcomeOf({ attributes: { 'http.response.status_code': 200 } })).toBe('success');
  });

  it("vLLM's finish reasons: error fails, abort cancels, stop and length complete", () => {
    const fr = (r: string) =>
      outcomeOf(
        { name: 'llm_request', attributes: { 'gen_ai.response.finish_reasons': `["${r}"]` } },
        vllmPod,
      );
    expect(fr('error')).toBe('error');
    expect(fr('abort')).toBe('cancelled');
    expect(fr('stop')).toBe('success');
    expect(fr('length')).toBe('success');
  });

  it('gRPC status and error.type', () => {
    expect(outcomeOf({ attributes: { 'rpc.grpc.status_code': 4 } })).toBe('timeout');
    expect(outcomeOf({ attributes: { 'rpc.grpc.status_code': 8 } })).toBe('rejected');
    expect(outcomeOf({ attributes: { 'error.type': 'ConnectionResetError' } })).toBe('error');
  });
});

describe('TTFT semantics', () => {
  it('a V1 latency left at 0.0 on a failed request is absent, not an instant first token', () => {
    const row = normalizeOne(
      span({
        attributes: {
          'gen_ai.latency.time_to_first_token': 0.0,
          'gen_ai.latency.e2e': 0.4,
          'gen_ai.latency.time_in_queue': 0.4,
          'gen_ai.latency.time_in_model_prefill': 0.0,
          'gen_ai.latency.time_in_model_decode': 0.0,
        },
      }),
      vllmPod,
    );
    expect(row.serverTtftMs).toBeNull();
    expect(row.firstTokenNs).toBeNull();
    expect(row.prefillMs).toBeNull();
  });

  it('a V0 span gets prefill = TTFT − queue and decode = e2e − TTFT', () => {
    const row = normalizeOne(
      span({
        attributes: {
          'gen_ai.latency.time_to_first_token': 0.25,
          'gen_ai.latency.e2e': 1.25,
          'gen_ai.latency.time_in_queue': 0.05,
          'gen_ai.latency.time_in_model_forward': 0.9,
        },
      }),
      vllmPod,
    );
    expect(row.prefillMs).toBeCloseTo(200, 6);
    expect(row.decodeMs).toBeCloseTo(1000, 6);
  });
});

describe('OpenTelemetry probability sampling', () => {
  it('reads th from the ot entry of tracestate', () => {
    expect(samplingProbabilityFromTraceState('ot=th:e666666666666')).toBeCloseTo(0.1, 6);
    expect(samplingProbabilityFromTraceState('vendor=x,ot=rv:1234;th:8')).toBeCloseTo(0.5, 9);
    expect(samplingProbabilityFromTraceState('ot=th:0')).toBe(1);
    expect(samplingProbabilityFromTraceState('vendor=x')).toBeNull();
  });
});
