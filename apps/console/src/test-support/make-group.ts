import type { SignalGroup } from '@governor/conventions';

/** A SignalGroup with plausible values, for component and unit tests. */
export function makeGroup(overrides: Partial<SignalGroup> = {}): SignalGroup {
  const p = { p50: null, p95: null, p99: null };
  return {
    key: { pool: 'pool-a' },
    requests: 100,
    ttftMs: { p50: 200, p95: 400, p99: 600 },
    serverTtftMs: p,
    e2eMs: { p50: 2000, p95: 4000, p99: 6000 },
    errorRate: 0,
    goodput: 0.99,
    utilizationRatio: 1,
    memoryUtil: 0.5,
    computeUtil: 0.5,
    successPerDollar: 50,
    costPerSuccessfulTaskUsd: 0.02,
    costUsd: 2,
    tasks: 100,
    successfulTasks: 99,
    retryRatio: 0,
    queueMs: p,
    cacheHitRate: null,
    replicas: 3,
    hops: {},
    ...overrides,
  };
}
