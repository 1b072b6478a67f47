import type { FaultKind, FaultTarget } from '../faults/fault-plan.ts';
import type { Percentiles } from './percentiles.ts';

/**
 * Ground truth of one run, against which Governor's signals are tested. Definitions:
 *
 * - request: one attempt = one trace (root span `POST /v1/chat/completions`), any outcome.
 *   `errors` counts outcomes error, timeout and preempted; `rejected` and `cancelled` are separate
 *   (cancelled = still in flight when the run stopped). `retries` = attempts with governor.attempt > 1.
 * - task: one workflow (`governor.workflow.id`) whose first step started before `--duration`.
 *   It succeeds when the final attempt of every step succeeded. A closed-loop workflow stops at its
 *   first finally-failed step (later steps are abandoned); steps never issued because the run
 *   ended make the task incomplete (not successful).
 * - goodput: successful tasks whose every final attempt had TTFT ≤ sloTtftMs and e2e ≤ sloE2eMs,
 *   divided by all tasks.
 * - TTFT (user-perceived): root span start → first output token, over requests with a first token.
 *   e2e: root span duration, over all requests. Percentiles interpolate linearly between ranks.
 * - cost: Σ over replicas of paid time × GPUs per replica × $/GPU-hour. A replica is paid from the
 *   moment it is requested (starting) until it is gone (after draining); killed replicas stop being
 *   paid when they die. GPU-hours likewise. Exact, not sampled.
 * - successPerDollar: successful tasks ÷ cost. costPerSuccessfulTaskUsd is its inverse.
 * - actions: control actions applied (autoscaler replica changes, actuator and lockstep actions).
 *   reversals: scale changes opposite to the pool's previous scale change within the reversal window.
 * - simStart / simEnd: RFC 3339 simulated times; the run ends when every task finished after the
 *   arrival window, or at the drain limit.
 */
export interface RunSummary {
  workload: string;
  scenario: string;
  policy: string;
  seed: number;
  simStart: string;
  simEnd: string;
  simDurationS: number;
  slo: { ttftMs: number; e2eMs: number };
  tasks: number;
  successfulTasks: number;
  tasksWithinSlo: number;
  incompleteTasks: number;
  goodput: number | null;
  taskSuccessRate: number | null;
  gpuHours: number;
  costUsd: number;
  successPerDollar: number | null;
  costPerSuccessfulTaskUsd: number | null;
  ttftMs: Percentiles;
  e2eMs: Percentiles;
  requests: number;
  successes: number;
  errors: number;
  timeouts: number;
  preempted: number;
  rejected: number;
  cancelled: number;
  retries: number;
  actions: number;
  reversals: number;
  pools: PoolSummary[];
  faults: FaultGroundTruth[];
  telemetry: TelemetrySummary | null;
  lockstep: LockstepSummary | null;
}

/** Per pool: requests routed to it (attempts); errors = error, timeout or preempted outcomes. */
export interface PoolSummary {
  pool: string;
  model: string;
  gpuType: string;
  region: string;
  gpusPerReplica: number;
  gpuHourUsd: number;
  requests: number;
  errors: number;
  replicasAvg: number;
  replicasMax: number;
  replicasEnd: number;
  gpuHours: number;
  costUsd: number;
  ttftMs: Percentiles;
  e2eMs: Percentiles;
  queueMs: Percentiles;
  cacheHitRate: number | null;
}

export interface FaultGroundTruth {
  kind: FaultKind;
  target: FaultTarget;
  start: string;
  end: string;
  params: Record<string, number>;
  /**
   * For a fault on one pool: when the first request that pool served after the fault began ended
   * (null if it served none). Until then its requests cannot show the fault.
   */
  firstRequestEnd: string | null;
}

export interface TelemetrySummary {
  target: string;
  protocol: string;
  spansEmitted: number;
  spansExported: number;
  spansFailed: number;
  metricPointsEmitted: number;
  metricPointsExported: number;
  metricPointsFailed: number;
  lastExportError: string | null;
}

export interface LockstepSummary {
  url: string;
  calls: number;
  failures: number;
  actionsReceived: number;
  actionsApplied: number;
  lastError: string | null;
}
