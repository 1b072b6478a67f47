import { FAULT_PARAMS } from '../faults/fault-plan.ts';
import type { FaultSpec } from '../faults/fault-plan.ts';
import type { FleetSpec, PoolSpec } from '../fleet/fleet-spec.ts';
import { ASSUMED_DECODE_BATCH, estimateServiceMs } from '../policies/static-sizing.ts';
import { PREFIX_BLOCK_TOKENS, countPrefixBlocks, getPrefixBlock } from '../workload/workload-types.ts';
import type { PrefixBlocks, Workload, WorkloadTask } from '../workload/workload-types.ts';

/** What each pool is asked to do per control interval, known in advance (the oracle's hindsight). */
export interface PoolDemand {
  pool: string;
  /** Engine work per interval in replicas kept busy: work ms ÷ interval ms, at the pool's speed then. */
  work: number[];
  /** KV-cache residency per interval in replicas filled: token·ms ÷ (KV capacity × interval ms). */
  kv: number[];
}

export interface DemandOptions {
  /** Arrival window: tasks (and chained episodes) starting later never arrive. */
  durationMs: number;
  /** How long after the arrival window the schedule runs (the simulation's drain limit). */
  drainMs: number;
  intervalMs: number;
  faults: readonly FaultSpec[];
}

/** Number of intervals a run of `durationMs + drainMs` spans. */
export function countIntervals(
  options: Pick<DemandOptions, 'durationMs' | 'drainMs' | 'intervalMs'>,
): number {
  return Math.max(1, Math.ceil((options.durationMs + options.drainMs) / options.intervalMs));
}

/**
 * Wall time a request occupies a replica: its prefill, then one decode step per further token at
 * the step time of an assumed batch (the same batch `estimateServiceMs` shares a step's cost over).
 */
export function estimateResidencyMs(pool: PoolSpec, uncachedTokens: number, outputTokens: number): number {
  const m = pool.stepModel;
  const prefill = m.baseMs + m.prefillOverheadMs + m.prefillPerTokenMs * uncachedTokens;
  const step = m.baseMs + m.decodePerSeqMs * ASSUMED_DECODE_BATCH;
  return prefill + Math.max(0, outputTokens - 1) * step;
}

/**
 * Per pool and control interval, the engine work and KV residency the workload asks for, from the
 * workload and the fault plan alone. Every request is placed at its arrival (a closed-loop step at
 * the previous step's estimated end plus its think time), split over the pools serving its model by
 * routing weight among those up at that moment (a region outage keeps a region's pools out until one
 * cold start after it ends, when their replicas are ready again), costed with the simulator's step
 * model slowed by any GPU degradation then (plus the retries its injected errors cause), and spread
 * over the intervals it runs through. Prefix reuse assumes one unbounded cache per model.
 */
export function estimateIntervalDemand(
  workload: Workload,
  fleet: FleetSpec,
  options: DemandOptions,
): PoolDemand[] {
  const { durationMs, intervalMs, faults } = options;
  const count = countIntervals(options);
  const work = new Map(fleet.pools.map((p) => [p.name, new Float64Array(count)]));
  const kv = new Map(fleet.pools.map((p) => [p.name, new Float64Array(count)]));
  const seen = new Map<string, Set<number>>();

  const isUp = (pool: PoolSpec, atMs: number) =>
    !faults.some(
      (f) =>
        f.kind === 'region-outage' &&
        f.target.region === pool.region &&
        atMs >= f.startMs &&
        atMs < f.endMs + pool.coldStartMs,
    );
  const slowdownAt = (pool: PoolSpec, atMs: number) => {
    let factor = 1;
    for (const f of faults) {
      if (f.kind !== 'gpu-degradation' || f.target.pool !== pool.name) continue;
      if (atMs < f.startMs || atMs >= f.endMs) continue;
      const p = FAULT_PARAMS.gpuDegradation;
      factor *= (f.params.slowdown ?? p.slowdown) * (1 + (f.params.errorRate ?? p.errorRate));
    }
    return factor;
  };

  /** Adds `amount` over [fromMs, fromMs + lengthMs), in proportion to each interval's overlap. */
  const spread = (into: Float64Array, fromMs: number, lengthMs: number, amount: number) => {
    if (lengthMs <= 0) {
      const i = Math.floor(fromMs / intervalMs);
      if (i >= 0 && i < count) into[i]! += amount / intervalMs;
      return;
    }
    const endMs = fromMs + lengthMs;
    for (let i = Math.max(0, Math.floor(fromMs / intervalMs)); i < count && i * intervalMs < endMs; i++) {
      const overlap = Math.min(endMs, (i + 1) * intervalMs) - Math.max(fromMs, i * intervalMs);
      if (overlap > 0) into[i]! += (amount * overlap) / lengthMs / intervalMs;
    }
  };

  const uncachedTokens = (model: string, input: number, prefix: PrefixBlocks | undefined) => {
    if (!prefix) return Math.max(1, input);
    const set = seen.get(model) ?? new Set<number>();
    seen.set(model, set);
    const total = countPrefixBlocks(prefix);
    let cached = 0;
    while (cached < total && set.has(getPrefixBlock(prefix, cached))) cached++;
    for (let i = 0; i < total; i++) set.add(getPrefixBlock(prefix, i));
    return Math.max(1, input - cached * PREFIX_BLOCK_TOKENS);
  };

  /** Places one request; returns its estimated latency (share-weighted over the pools it may take). */
  const place = (model: string, atMs: number, input: number, output: number, prefix?: PrefixBlocks) => {
    const uncached = uncachedTokens(model, input, prefix);
    const serving = fleet.pools.filter((p) => p.model === model);
    const up = serving.filter((p) => isUp(p, atMs));
    const candidates = up.length > 0 ? up : serving;
    const weighted = candidates.filter((p) => p.weight > 0);
    const routed = weighted.length > 0 ? weighted : candidates;
    const totalWeight = routed.reduce((s, p) => s + (weighted.length > 0 ? p.weight : 1), 0);
    let latencyMs = 0;
    for (const pool of routed) {
      const share = (weighted.length > 0 ? pool.weight : 1) / totalWeight;
      const slowdown = slowdownAt(pool, atMs);
      const residencyMs = estimateResidencyMs(pool, uncached, output) * slowdown;
      spread(
        work.get(pool.name)!,
        atMs,
        residencyMs,
        share * estimateServiceMs(pool, uncached, output) * slowdown,
      );
      const kvTokenMs = (input + output / 2) * residencyMs;
      spread(kv.get(pool.name)!, atMs, residencyMs, (share * kvTokenMs) / pool.kvCapacityTokens);
      latencyMs += share * residencyMs;
    }
    return latencyMs;
  };

  const walk = (task: WorkloadTask, startMs: number) => {
    let t = startMs;
    for (const step of task.steps) {
      if (task.openLoop) {
        const atMs = startMs + (step.atOffsetMs ?? 0);
        t = Math.max(t, atMs + place(task.model, atMs, step.inputTokens, step.outputTokens, step.prefix));
      } else {
        t += step.thinkMs;
        t += place(task.model, t, step.inputTokens, step.outputTokens, step.prefix);
      }
    }
    if (task.next && t + task.next.startMs < durationMs) walk(task.next, t + task.next.startMs);
  };
  for (const task of workload.tasks) if (task.startMs < durationMs) walk(task, task.startMs);

  return fleet.pools.map((pool) => ({
    pool: pool.name,
    work: [...work.get(pool.name)!],
    kv: [...kv.get(pool.name)!],
  }));
}
