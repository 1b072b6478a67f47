import { describe, expect, it } from 'vitest';
import { decodeMetricsRequestProtobuf } from './decode-protobuf.ts';
import { encodeMetricsRequestProtobuf } from './encode-metrics-request.ts';
import { fleetMetricsRequest } from './fixtures/index.ts';
import { normalizeMetricsRequest } from './normalize-metrics.ts';
import type { DecodedMetricsRequest } from './types.ts';

const T0 = 1_760_000_000_000_000_000n;

describe('normalizeMetricsRequest', () => {
  it('turns every data point into a row with its resource, pool, replica and model', () => {
    const request = decodeMetricsRequestProtobuf(encodeMetricsRequestProtobuf(fleetMetricsRequest(T0, 'p1')));
    const { rows, rejected } = normalizeMetricsRequest(request, {});
    expect(rejected).toBe(0);
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['vllm:kv_cache_usage_perc']).toMatchObject({
      type: 'gauge',
      value: 0.62,
      timeNs: T0,
      startNs: null,
      service: 'vllm',
      pool: 'p1',
      replica: 'p1-0',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      unit: '1',
    });
    expect(byName['vllm:generation_tokens_total']).toMatchObject({
      type: 'sum',
      value: 123456,
      isMonotonic: true,
      temporality: 2,
      startNs: T0 - 60_000_000_000n,
    });
    expect(byName['vllm:time_to_first_token_seconds']).toMatchObject({
      type: 'histogram',
      value: null,
      count: 30,
      sum: 4.5,
      min: 0.02,
      max: 0.9,
      bucketCounts: '[5,20,4,1]',
      explicitBounds: '[0.05,0.2,0.5]',
    });
    expect(JSON.parse(byName['vllm:e2e_request_latency_seconds']!.quantiles!)).toEqual([
      { quantile: 0.5, value: 1.2 },
      { quantile: 0.99, value: 4.1 },
    ]);
    expect(byName['governor.pool.replicas']).toMatchObject({
      value: 4,
      pool: 'p1',
      service: 'governor-simulator',
    });
  });

  it('rejects nameless metrics, metrics without data and points without a time, keeping the rest', () => {
    const request: DecodedMetricsRequest = {
      resourceMetrics: [
        {
          resource: {},
          scopeMetrics: [
            {
              scope: { name: '', version: '' },
              metrics: [
                {
                  name: '',
                  description: '',
                  unit: '',
                  type: 'gauge',
                  isMonotonic: false,
                  temporality: 0,
                  points: [],
                },
                {
                  name: 'no_data',
                  description: '',
                  unit: '',
                  type: null,
                  isMonotonic: false,
                  temporality: 0,
                  points: [],
                },
                {
                  name: 'g',
                  description: '',
                  unit: '',
                  type: 'gauge',
                  isMonotonic: false,
                  temporality: 0,
                  points: [
                    { ...emptyPoint(), timeNs: T0, value: 1 },
                    { ...emptyPoint(), timeNs: 0n, value: 2 },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const { rows, rejected, problems } = normalizeMetricsRequest(request, {});
    expect(rows.map((r) => r.value)).toEqual([1]);
    expect(rejected).toBe(3);
    expect(problems.join('; ')).toMatch(/no name.*no data.*without time_unix_nano/);
  });

  it('applies attribute aliases', () => {
    const request = fleetMetricsRequest(T0);
    request.resourceMetrics[1]!.scopeMetrics[0]!.metrics[0]!.points[0]!.attributes = {
      'k8s.pool': 'aliased',
    };
    const { rows } = normalizeMetricsRequest(request, { 'k8s.pool': 'governor.pool' });
    expect(rows.find((r) => r.name === 'governor.pool.replicas')!.pool).toBe('aliased');
  });
});

function emptyPoint() {
  return {
    attributes: {},
    startNs: 0n,
    timeNs: 0n,
    value: null,
    count: null,
    sum: null,
    min: null,
    max: null,
    bucketCounts: null,
    explicitBounds: null,
    quantiles: null,
  };
}
