import type { PoolModel } from '../model/predict-pool.ts';
import type { ReplicaStep } from './replay-prefill-queue.ts';
import { modelPool } from '../objective/plan-scale.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, readMemory } from './detect-context.ts';
import { MIN_P95_SAMPLE, readFaultRate, readUncontendedMsPerToken } from './pool-signals.ts';

/**
 * The pool's model (predict-pool.ts) from what the tick observed: its recent requests, its
 * uncontended prefill speed and the SLO. Null where the model cannot judge: no SLO, no learned
 * speed, fewer requests than a p95 needs, or more measured queueing than the replay explains (prefill,
 * and KV admission) beyond the slack the attainment target leaves in
 * the SLO (replicas held by something else, which the model does not size for).
 */
export function readPoolModel(ctx: DetectContext, pool: PoolView): PoolModel | null {
  const msPerToken = readUncontendedMsPerToken(ctx.state.learning.get(pool.pool), ctx.tuning);
  const sloMs = ctx.slo.ttft_ms ?? null;
  const e2eSloMs = ctx.slo.e2e_ms ?? null;
  const replicas = pool.replicas ?? ctx.state.actuated.replicas[pool.pool] ?? null;
  if (msPerToken === null || (sloMs === null && e2eSloMs === null) || replicas === null || replicas < 1)
    return null;
  if (pool.arrivals.length < MIN_P95_SAMPLE) return null;
  const servedOn = readServedOn(ctx, pool.pool, replicas);
  const model = modelPool({
    arrivals: pool.arrivals,
    replicas,
    ...(servedOn ? { servedOn } : {}),
    mainRatePerS: pool.mainRatePerS,
    msPerToken,
    prefixHitRate: pool.prefixHitRate,
    sloMs,
    e2eSloMs,
    successShare: 1 - (readFaultRate(pool.main) ?? 0),
    kvUsage: pool.main?.memoryUtil ?? null,
    usdPerReplicaHour: pool.gpuHourUsd === null ? null : pool.gpuHourUsd * pool.gpusPerReplica,
  });
  if (!model) return null;
  const slack = (1 - ctx.control.slo_attainment_target) * (sloMs ?? e2eSloMs!);
  return model.unexplainedQueueMs > slack ? null : model;
}

/**
 * The replica counts that served the pool over the control window (the arrivals' time axis starts at
 * its beginning), when Governor's last scale action took effect within it: the count it started from
 * until then, `replicas` after. A scale-in takes effect when applied (its replicas take no new
 * requests while they drain); a scale-up once its replicas were ready. Undefined when the window saw
 * no such change (or only one made outside Governor, whose counts are not known).
 */
export function readServedOn(
  ctx: DetectContext,
  pool: string,
  replicas: number,
): readonly ReplicaStep[] | undefined {
  const memory = readMemory(ctx, 'scale', { pool });
  if (!memory || memory.fromReplicas === undefined || memory.fromReplicas === replicas) return undefined;
  const atNs = memory.direction === 'decrease' ? memory.appliedNs : memory.readyNs;
  const windowStartNs = ctx.obs.atNs - BigInt(ctx.obs.windowMs) * 1_000_000n;
  if (atNs === undefined || atNs <= windowStartNs) return undefined;
  return [
    { fromMs: Number.NEGATIVE_INFINITY, replicas: memory.fromReplicas },
    { fromMs: Number(atNs - windowStartNs) / 1e6, replicas },
  ];
}
