import type { SignalGroup } from '@governor/conventions';

/**
 * Reads a signal by its dotted path into a SignalGroup — `ttftMs.p95`, `errorRate`,
 * `hops.queue.p95`, `successPerDollar`… — as a number, or null when the group has no value there
 * (no data, or not a numeric field).
 */
export function readSignalValue(group: SignalGroup, path: string): number | null {
  let current: unknown = group;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return null;
    current = (current as Record<string, unknown>)[part];
  }
  return typeof current === 'number' && Number.isFinite(current) ? current : null;
}

/** Signal paths a series or an alert rule can name (numeric leaves of SignalGroupDetail). */
export const SIGNAL_PATHS: readonly string[] = [
  'requests',
  ...['ttftMs', 'serverTtftMs', 'e2eMs', 'taskE2eMs', 'queueMs'].flatMap((p) => [
    `${p}.p50`,
    `${p}.p95`,
    `${p}.p99`,
  ]),
  'errorRate',
  'preemptionRate',
  'goodput',
  'utilizationRatio',
  'memoryUtil',
  'computeUtil',
  'successPerDollar',
  'costPerSuccessfulTaskUsd',
  'costUsd',
  'tasks',
  'successfulTasks',
  'goodTasks',
  'abandonedTasks',
  'pendingTasks',
  'retries',
  'retryRatio',
  'queueDepth',
  'cacheHitRate',
  'tokensPerS',
  'replicas',
  'peakTokensPerSPerReplica',
];

const HOP_PATH =
  /^hops\.(gateway|router|cache|queue|prefill|decode|stream|runtime|tool|other)\.(p50|p95|shareOfE2e|shareOfTtft)$/;

/** True for a path readSignalValue can ever return a number for. */
export function isSignalPath(path: string): boolean {
  return SIGNAL_PATHS.includes(path) || HOP_PATH.test(path);
}
