import type { FleetSpec, PoolSpec } from '../fleet/fleet-spec.ts';
import { PREFIX_BLOCK_TOKENS, countPrefixBlocks, getPrefixBlock } from '../workload/workload-types.ts';
import type { Workload, WorkloadTask } from '../workload/workload-types.ts';

/** Batch size assumed when sharing a decode step's cost between sequences (static sizing, the oracle). */
export const ASSUMED_DECODE_BATCH = 16;
/** Sizing leaves this much headroom: replicas = ⌈load / 0.7⌉. */
const TARGET_LOAD = 0.7;
const WINDOW_MS = 60_000;

/**
 * Replica-milliseconds a request costs on a pool: one prefill (fixed overhead plus uncached prompt
 * tokens) and its decode steps, each step's cost shared by an assumed batch of 16.
 */
export function estimateServiceMs(pool: PoolSpec, uncachedTokens: number, outputTokens: number): number {
  const m = pool.stepModel;
  const prefill = m.baseMs + m.prefillOverheadMs + m.prefillPerTokenMs * uncachedTokens;
  const decodePerToken = (m.baseMs + m.decodePerSeqMs * ASSUMED_DECODE_BATCH) / ASSUMED_DECODE_BATCH;
  return prefill + Math.max(0, outputTokens - 1) * decodePerToken;
}

export interface PoolLoad {
  pool: string;
  /** Busy replicas per 60 s window of the run. */
  windows: number[];
  peak: number;
  mean: number;
}

/**
 * Offered load per pool over the run, from the workload alone: each request is placed at its
 * arrival (closed-loop steps at the previous step's estimated end plus think time), split across the
 * pools serving its model by routing weight, with prefix reuse assumed from an unbounded cache.
 */
export function estimatePoolLoads(workload: Workload, fleet: FleetSpec, durationMs: number): PoolLoad[] {
  const windowCount = Math.max(1, Math.ceil(durationMs / WINDOW_MS));
  const loads = new Map(fleet.pools.map((p) => [p.name, new Float64Array(windowCount)]));
  const seen = new Map<string, Set<number>>();
  const addRequest = (
    model: string,
    atMs: number,
    input: number,
    output: number,
    prefix: WorkloadTask['steps'][number]['prefix'],
  ): number => {
    const set = seen.get(model) ?? new Set<number>();
    seen.set(model, set);
    let cachedBlocks = 0;
    if (prefix) {
      const total = countPrefixBlocks(prefix);
      while (cachedBlocks < total && set.has(getPrefixBlock(prefix, cachedBlocks))) cachedBlocks++;
      for (let i = 0; i < total; i++) set.add(getPrefixBlock(prefix, i));
    }
    const uncached = Math.max(1, input - cachedBlocks * PREFIX_BLOCK_TOKENS);
    const serving = fleet.pools.filter((p) => p.model === model);
    const totalWeight = serving.reduce((s, p) => s + p.weight, 0);
    const window = Math.floor(atMs / WINDOW_MS);
    let latencyMs = 0;
    for (const pool of serving) {
      const share = totalWeight > 0 ? pool.weight / totalWeight : 1 / serving.length;
      const serviceMs = estimateServiceMs(pool, uncached, output);
      latencyMs = Math.max(latencyMs, serviceMs);
      if (window < windowCount) loads.get(pool.name)![window]! += (share * serviceMs) / WINDOW_MS;
    }
    return latencyMs;
  };
  const walk = (task: WorkloadTask, startMs: number) => {
    let t = startMs;
    for (const step of task.steps) {
      if (task.openLoop) {
        addRequest(
          task.model,
          startMs + (step.atOffsetMs ?? 0),
          step.inputTokens,
          step.outputTokens,
          step.prefix,
        );
      } else {
        t += step.thinkMs;
        t += addRequest(task.model, t, step.inputTokens, step.outputTokens, step.prefix);
      }
    }
    if (task.next && t + task.next.startMs < durationMs) walk(task.next, t + task.next.startMs);
  };
  for (const task of workload.tasks) if (task.startMs < durationMs) walk(task, task.startMs);
  return fleet.pools.map((pool) => {
    const windows = [...loads.get(pool.name)!];
    return {
      pool: pool.name,
      windows,
      peak: Math.max(...windows),
      mean: windows.reduce((s, v) => s + v, 0) / windows.length,
    };
  });
}

/** Replica counts for the static baselines: sized for the peak or the mean window, with headroom. */
export function sizeStaticFleet(
  workload: Workload,
  fleet: FleetSpec,
  durationMs: number,
  mode: 'peak' | 'mean',
): Map<string, number> {
  const loads = estimatePoolLoads(workload, fleet, durationMs);
  const sizes = new Map<string, number>();
  for (const pool of fleet.pools) {
    const load = loads.find((l) => l.pool === pool.name)!;
    const needed = Math.ceil((mode === 'peak' ? load.peak : load.mean) / TARGET_LOAD);
    sizes.set(pool.name, Math.max(pool.minReplicas, Math.min(pool.maxReplicas, needed)));
  }
  return sizes;
}
