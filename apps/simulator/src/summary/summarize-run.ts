import { formatSimTime } from '../engine/sim-time.ts';
import type { FaultSpec } from '../faults/fault-plan.ts';
import type { Simulation } from '../sim/simulation.ts';
import { computePercentiles } from './percentiles.ts';
import type { LockstepSummary, PoolSummary, RunSummary, TelemetrySummary } from './run-summary.ts';

const MS_PER_HOUR = 3_600_000;
const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

export interface SummaryContext {
  workload: string;
  scenario: string;
  policy: string;
  faults: FaultSpec[];
  telemetry: TelemetrySummary | null;
  lockstep: LockstepSummary | null;
}

/** Builds the run's ground truth (definitions on RunSummary) from a finished simulation. */
export function summarizeRun(sim: Simulation, context: SummaryContext): RunSummary {
  const start = sim.startEpochMs;
  const endMs = sim.simEndMs;
  let gpuHours = 0;
  let costUsd = 0;
  const pools: PoolSummary[] = sim.pools.map((pool) => {
    const spec = pool.spec;
    const replicaHours = pool.paidIntegralMs / MS_PER_HOUR;
    const poolGpuHours = replicaHours * spec.gpusPerReplica;
    const poolCost = poolGpuHours * spec.gpuHourUsd;
    gpuHours += poolGpuHours;
    costUsd += poolCost;
    const s = pool.stats;
    return {
      pool: spec.name,
      model: spec.model,
      gpuType: spec.gpuType,
      region: spec.region,
      gpusPerReplica: spec.gpusPerReplica,
      gpuHourUsd: spec.gpuHourUsd,
      requests: s.requests,
      errors: s.errors,
      replicasAvg: endMs > 0 ? round6(pool.paidIntegralMs / endMs) : pool.paidCount,
      replicasMax: pool.paidMax,
      replicasEnd: pool.replicas.length,
      gpuHours: round6(poolGpuHours),
      costUsd: round6(poolCost),
      ttftMs: computePercentiles(s.ttftMs),
      e2eMs: computePercentiles(s.e2eMs),
      queueMs: computePercentiles(s.queueMs),
      cacheHitRate: s.promptTokens > 0 ? round6(s.cachedTokens / s.promptTokens) : null,
    };
  });
  const tasks = sim.tasksStarted;
  const successfulTasks = sim.tasksSucceeded;
  return {
    workload: context.workload,
    scenario: context.scenario,
    policy: context.policy,
    seed: sim.config.seed,
    simStart: formatSimTime(start, 0),
    simEnd: formatSimTime(start, endMs),
    simDurationS: round6(endMs / 1000),
    slo: { ttftMs: sim.config.sloTtftMs, e2eMs: sim.config.sloE2eMs },
    tasks,
    successfulTasks,
    tasksWithinSlo: sim.tasksWithinSlo,
    incompleteTasks: sim.tasksIncomplete,
    goodput: tasks > 0 ? round6(sim.tasksWithinSlo / tasks) : null,
    taskSuccessRate: tasks > 0 ? round6(successfulTasks / tasks) : null,
    gpuHours: round6(gpuHours),
    costUsd: round6(costUsd),
    successPerDollar: costUsd > 0 ? round6(successfulTasks / costUsd) : null,
    costPerSuccessfulTaskUsd: successfulTasks > 0 ? round6(costUsd / successfulTasks) : null,
    ttftMs: computePercentiles(sim.ttftMs),
    e2eMs: computePercentiles(sim.e2eMs),
    requests: sim.requests,
    successes: sim.outcomes.success,
    errors: sim.outcomes.error + sim.outcomes.timeout + sim.outcomes.preempted,
    timeouts: sim.outcomes.timeout,
    preempted: sim.outcomes.preempted,
    rejected: sim.outcomes.rejected,
    cancelled: sim.outcomes.cancelled,
    retries: sim.retries,
    actions: sim.actions,
    reversals: sim.reversals,
    pools,
    faults: context.faults.map((f) => ({
      kind: f.kind,
      target: f.target,
      start: formatSimTime(start, f.startMs),
      end: formatSimTime(start, f.endMs),
      params: f.params,
      firstRequestEnd: sim.faultFirstRequestMs.has(f)
        ? formatSimTime(start, sim.faultFirstRequestMs.get(f)!)
        : null,
    })),
    telemetry: context.telemetry,
    lockstep: context.lockstep,
  };
}
