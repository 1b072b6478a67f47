import type { GroupDimension, SignalGroup, SignalsSnapshot } from '@governor/conventions';

const NO_PERCENTILES = { p50: null, p95: null, p99: null };

/** A signal group with no data except what the test sets. */
export function signalGroup(
  key: Partial<Record<GroupDimension, string | number | null>>,
  values: Partial<SignalGroup> = {},
): SignalGroup {
  return {
    key,
    requests: 0,
    ttftMs: NO_PERCENTILES,
    serverTtftMs: NO_PERCENTILES,
    e2eMs: NO_PERCENTILES,
    errorRate: null,
    goodput: null,
    utilizationRatio: null,
    memoryUtil: null,
    computeUtil: null,
    successPerDollar: null,
    costPerSuccessfulTaskUsd: null,
    costUsd: null,
    tasks: 0,
    successfulTasks: 0,
    retryRatio: null,
    queueMs: NO_PERCENTILES,
    cacheHitRate: null,
    replicas: null,
    hops: {},
    ...values,
  };
}

export function snapshotOf(groups: SignalGroup[], window = '5m'): SignalsSnapshot {
  return { at: new Date(0).toISOString(), window, groups, truncated: false, maxGroups: 1000, otherGroups: 0 };
}
