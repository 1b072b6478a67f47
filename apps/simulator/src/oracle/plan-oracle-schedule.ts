// The hindsight oracle's replica schedule. It knows what no live policy can: every arrival, and how
// fast each pool will be at every moment (GPU degradations, outages, preemptions and crashes come
// from the fault plan). Assumptions, all stated so a reader can judge the bound:
// - Need: a pool needs ⌈max(engine work, KV residency) ÷ target utilization⌉ replicas
//   (estimate-interval-demand.ts: the simulator's step model, routing weights, unbounded prefix cache
//   per model), within its min and max replicas, the load averaged over blocks of `smoothingIntervals`
//   control intervals (1: every interval on its own; longer blocks let queues absorb a burst, as a
//   fleet sized for its mean does). Target utilization and block length are the two knobs;
//   runHindsightOracle sweeps them and the simulator measures each schedule's goodput and cost.
// - Cold starts are honoured: a replica requested at interval t serves from t + its cold start (×
//   the cold-pool fault's factor inside that fault), so the count needed at k is requested by
//   k − ⌈cold start ÷ interval⌉ and kept until k. Replicas present at t = 0 are warm, as the static
//   baselines' are.
// - Faults that take replicas away are paid for in advance: a preempted pool carries
//   ⌈cold start ÷ preemption period⌉ spares while preemptions last; a retry-storm pool carries twice
//   its need from the crash until the crashed half's replacements are ready (half crash at once).
// - Not modelled: the cold pool's warm-up slowdown, client retries beyond the degraded pool's
//   injected errors, the retry storm's shorter client timeout, and routing by session hash (a pool
//   gets its weighted share of every request). It is not an optimum over all schedules: a per-interval
//   minimum shifted by the cold-start lead, checked by simulating it like any other policy.

import { FAULT_PARAMS } from '../faults/fault-plan.ts';
import type { FaultSpec } from '../faults/fault-plan.ts';
import type { FleetSpec, PoolSpec } from '../fleet/fleet-spec.ts';
import type { Workload } from '../workload/workload-types.ts';
import { countIntervals, estimateIntervalDemand } from './estimate-interval-demand.ts';

export interface OracleScheduleOptions {
  durationMs: number;
  drainMs: number;
  intervalMs: number;
  faults: readonly FaultSpec[];
  /** Share of a replica's engine time and KV cache the schedule plans to use (0 < u). */
  targetUtilization: number;
  /** Control intervals whose load is averaged before sizing (default 1). */
  smoothingIntervals?: number;
}

export interface PoolSchedule {
  pool: string;
  /** Replicas that must be serving in each interval. */
  need: number[];
  /** Replicas to ask for at the start of each interval (need, requested one cold start ahead). */
  desired: number[];
  /** Intervals between asking for a replica and its serving, by the interval it must serve. */
  leadIntervals: number[];
}

export interface OracleSchedule {
  intervalMs: number;
  targetUtilization: number;
  smoothingIntervals: number;
  pools: PoolSchedule[];
}

export function planOracleSchedule(
  workload: Workload,
  fleet: FleetSpec,
  options: OracleScheduleOptions,
): OracleSchedule {
  const { intervalMs, faults, targetUtilization } = options;
  const smoothing = Math.max(1, Math.round(options.smoothingIntervals ?? 1));
  if (!(targetUtilization > 0))
    throw new Error(`oracle target utilization must be > 0, got ${targetUtilization}`);
  const count = countIntervals(options);
  const demand = estimateIntervalDemand(workload, fleet, options);
  const overlaps = (i: number, fromMs: number, toMs: number) =>
    i * intervalMs < toMs && (i + 1) * intervalMs > fromMs;
  const pools = fleet.pools.map((spec, index): PoolSchedule => {
    const d = demand[index]!;
    const load = d.work.map((w, i) => Math.max(w, d.kv[i]!));
    const need = load.map((_, i) => {
      const from = i - (i % smoothing);
      const block = load.slice(from, Math.min(count, from + smoothing));
      const mean = block.reduce((sum, v) => sum + v, 0) / block.length;
      return mean > 0 ? Math.ceil(mean / targetUtilization - 1e-9) : 0;
    });
    addFaultSpares(spec, need, faults, overlaps);
    for (let i = 0; i < count; i++)
      need[i] = Math.max(spec.minReplicas, Math.min(spec.maxReplicas, need[i]!));
    const leadIntervals = need.map((_, k) =>
      Math.ceil(coldStartAt(spec, k * intervalMs, faults) / intervalMs),
    );
    const desired = [...need];
    for (let k = 0; k < count; k++) {
      for (let t = Math.max(0, k - leadIntervals[k]!); t < k; t++)
        desired[t] = Math.max(desired[t]!, need[k]!);
    }
    return { pool: spec.name, need, desired, leadIntervals };
  });
  return { intervalMs, targetUtilization, smoothingIntervals: smoothing, pools };
}

/** Cold start of a replica that must serve from `serveAtMs` (slower while a cold-pool fault lasts). */
function coldStartAt(spec: PoolSpec, serveAtMs: number, faults: readonly FaultSpec[]): number {
  let factor = 1;
  for (const f of faults) {
    if (f.kind !== 'cold-pool' || f.target.pool !== spec.name) continue;
    if (serveAtMs >= f.startMs && serveAtMs < f.endMs)
      factor = Math.max(factor, f.params.coldStartFactor ?? FAULT_PARAMS.coldPool.coldStartFactor);
  }
  return spec.coldStartMs * factor;
}

function addFaultSpares(
  spec: PoolSpec,
  need: number[],
  faults: readonly FaultSpec[],
  overlaps: (i: number, fromMs: number, toMs: number) => boolean,
): void {
  for (const f of faults) {
    if (f.target.pool !== spec.name) continue;
    if (f.kind === 'preemption') {
      const spares = Math.ceil(spec.coldStartMs / (f.params.everyMs ?? FAULT_PARAMS.preemption.everyMs));
      for (let i = 0; i < need.length; i++) if (overlaps(i, f.startMs, f.endMs)) need[i]! += spares;
    } else if (f.kind === 'retry-storm' || f.kind === 'retry-storm-budget') {
      for (let i = 0; i < need.length; i++)
        if (overlaps(i, f.startMs, f.startMs + spec.coldStartMs)) need[i] = 2 * Math.max(1, need[i]!);
    }
  }
}

/** What a schedule costs as planned: Σ desired replicas × interval × GPUs × $/GPU-hour. */
export function computeScheduleCostUsd(schedule: OracleSchedule, fleet: FleetSpec): number {
  let costUsd = 0;
  for (const pool of schedule.pools) {
    const spec = fleet.pools.find((p) => p.name === pool.pool)!;
    const replicaMs = pool.desired.reduce((s, n) => s + n, 0) * schedule.intervalMs;
    costUsd += (replicaMs / 3_600_000) * spec.gpusPerReplica * spec.gpuHourUsd;
  }
  return costUsd;
}
