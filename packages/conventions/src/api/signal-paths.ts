import { ATTRIBUTION_HOP_KEYS } from './signals.ts';

/**
 * Signal paths GET /api/signals/series can chart and an alert rule can name: the numeric leaves of
 * a signal group, dotted (`ttftMs.p95`, `errorRate`). Hop paths (`hops.queue.p95`) are matched by
 * isSignalPath rather than listed.
 */
export const SIGNAL_PATHS: readonly string[] = [
  'requests',
  ...['ttftMs', 'serverTtftMs', 'e2eMs', 'taskE2eMs', 'queueMs'].flatMap((p) => [
    `${p}.p50`,
    `${p}.p95`,
    `${p}.p99`,
  ]),
  'errorRate',
  'overloadRate',
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

const HOP_PATH = new RegExp(
  `^hops\\.(?:${ATTRIBUTION_HOP_KEYS.join('|')})\\.(?:p50|p95|shareOfE2e|shareOfTtft)$`,
);

/** True for a path the signals API can ever return a number for. */
export function isSignalPath(path: string): boolean {
  return SIGNAL_PATHS.includes(path) || HOP_PATH.test(path);
}
