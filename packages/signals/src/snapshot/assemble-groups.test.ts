import { describe, expect, it } from 'vitest';
import { testConfig } from '../../test/store-harness.ts';
import { assembleGroups } from './assemble-groups.ts';
import { computePoolBuckets } from './pool-costs.ts';

// Cost allocation and capacity from the rows the window queries return (docs/sql.md).

const config = testConfig({
  pricing: { gpu_hour_usd: { H100: 3.6 }, default_gpu_hour_usd: 1.8 },
  pools: [{ name: 'big', gpu_type: 'H100', gpus_per_replica: 4, peak_tokens_per_s_per_replica: 100 }],
});
const SECONDS = 300;
const pools = (rows: Record<string, unknown>[]) =>
  computePoolBuckets(rows, () => SECONDS, config, new Map([['small', 50]]));
const poolRow = (pool: string, fields: Record<string, unknown>) => ({
  bucket: 0,
  pool,
  requests: 0,
  tokens: 0,
  span_replicas: 0,
  ...fields,
});

describe('pool cost and allocation', () => {
  it('prices replica-time × GPUs × $/GPU-hour, from config or the default price', () => {
    const [big, small] = pools([
      poolRow('big', {
        replica_ns: 2 * SECONDS * 1e9,
        gpus_per_replica: 4,
        gpu_type: 'H100',
        requests: 10,
        gpu_ms: 100,
      }),
      poolRow('small', { span_replicas: 3, requests: 5, tokens: 1000 }),
    ]);
    expect(big!.costUsd).toBeCloseTo((2 * SECONDS * 4 * 3.6) / 3600, 12);
    expect(big!.meanReplicas).toBe(2);
    expect(small!.costUsd).toBeCloseTo((3 * SECONDS * 1 * 1.8) / 3600, 12);
    expect(small!.basis).toBe('tokens');
  });

  it('splits a pool’s cost between groups by GPU time and spreads idle pools over the fleet', () => {
    const rows = pools([
      poolRow('big', {
        replica_ns: 1 * SECONDS * 1e9,
        gpus_per_replica: 4,
        gpu_type: 'H100',
        requests: 4,
        gpu_ms: 400,
      }),
      poolRow('idle', { replica_ns: 2 * SECONDS * 1e9, gpu_type: 'H100' }),
    ]);
    const groups = assembleGroups({
      by: ['tenant'],
      filter: {},
      seconds: SECONDS,
      requests: [
        { bucket: 0, k_tenant: 'a', requests: 3, tasks: 3, successful_tasks: 3 },
        { bucket: 0, k_tenant: 'b', requests: 1, tasks: 1, successful_tasks: 0 },
      ],
      weights: [
        { bucket: 0, k_tenant: 'a', pool: 'big', requests: 3, gpu_ms: 300, tokens: 0 },
        { bucket: 0, k_tenant: 'b', pool: 'big', requests: 1, gpu_ms: 100, tokens: 0 },
      ],
      pools: rows,
    });
    const bigUsd = (SECONDS * 4 * 3.6) / 3600;
    const idleUsd = (2 * SECONDS * 3.6) / 3600;
    const [a, b] = groups;
    expect(a!.costUsd).toBeCloseTo(0.75 * (bigUsd + idleUsd), 12);
    expect(b!.costUsd).toBeCloseTo(0.25 * (bigUsd + idleUsd), 12);
    expect(a!.successPerDollar).toBeCloseTo(3 / a!.costUsd!, 12);
    expect(b!.successPerDollar).toBe(0);
    expect(b!.costPerSuccessfulTaskUsd).toBeNull();
  });

  it('reports replicas and utilization for pool-level groups: memory/compute, bound label', () => {
    const groups = assembleGroups({
      by: ['pool'],
      filter: {},
      seconds: SECONDS,
      requests: [{ bucket: 0, k_pool: 'big', requests: 10, output_tokens: 2 * 100 * SECONDS * 0.5 }],
      weights: [{ bucket: 0, k_pool: 'big', pool: 'big', requests: 10, gpu_ms: 1000, tokens: 10 }],
      pools: pools([
        poolRow('big', {
          replica_ns: 2 * SECONDS * 1e9,
          gpus_per_replica: 4,
          gpu_type: 'H100',
          requests: 10,
          gpu_ms: 1000,
          output_tokens: 2 * 100 * SECONDS * 0.5,
          peak_tokens_per_s: 100,
          kv_usage: 0.9,
        }),
      ]),
    });
    const big = groups[0]!;
    expect(big.replicas).toBe(2);
    expect(big.computeUtil).toBeCloseTo(0.5, 12);
    expect(big.memoryUtil).toBeCloseTo(0.9, 12);
    expect(big.utilizationRatio).toBeCloseTo(1.8, 12);
    expect(big.utilizationBound).toBe('memory');
    expect(big.tokensPerS).toBeCloseTo(100, 12);
  });

  it('uses explicit governor.cost.usd where a pool has no replica-based cost', () => {
    const groups = assembleGroups({
      by: [],
      filter: {},
      seconds: SECONDS,
      requests: [{ bucket: 0, requests: 2, tasks: 2, successful_tasks: 2 }],
      weights: [{ bucket: 0, pool: 'api', requests: 2, tokens: 10, explicit_cost_usd: 0.02 }],
      pools: pools([poolRow('api', { requests: 2, tokens: 10, explicit_cost_usd: 0.02 })]),
    });
    expect(groups[0]!.costUsd).toBeCloseTo(0.02, 12);
    expect(groups[0]!.costPerSuccessfulTaskUsd).toBeCloseTo(0.01, 12);
  });
});
