import type { PoolModel } from '../model/predict-pool.ts';
import { modelPool } from '../objective/plan-scale.ts';
import type { PoolView } from '../observe-fleet.ts';
import type { DetectContext } from './detect-context.ts';
import { MIN_P95_SAMPLE, readFaultRate, readUncontendedMsPerToken } from './pool-signals.ts';

/**
 * The pool's model (predict-pool.ts) from what the tick observed: its recent requests, its
 * uncontended prefill speed and the SLO. Null where the model cannot judge: no SLO, no learned
 * speed, fewer requests than a p95 needs, or more measured queueing than the prefill replay explains
 * beyond the slack the attainment target leaves in the SLO (replicas held by decode or KV blocks,
 * which the model does not size for).
 */
export function readPoolModel(ctx: DetectContext, pool: PoolView): PoolModel | null {
  const msPerToken = readUncontendedMsPerToken(ctx.state.learning.get(pool.pool), ctx.tuning);
  const sloMs = ctx.slo.ttft_ms ?? null;
  const e2eSloMs = ctx.slo.e2e_ms ?? null;
  const replicas = pool.replicas ?? ctx.state.actuated.replicas[pool.pool] ?? null;
  if (msPerToken === null || (sloMs === null && e2eSloMs === null) || replicas === null || replicas < 1)
    return null;
  if (pool.arrivals.length < MIN_P95_SAMPLE) return null;
  const model = modelPool({
    arrivals: pool.arrivals,
    replicas,
    mainRatePerS: pool.mainRatePerS,
    msPerToken,
    sloMs,
    e2eSloMs,
    successShare: 1 - (readFaultRate(pool.main) ?? 0),
    usdPerReplicaHour: pool.gpuHourUsd === null ? null : pool.gpuHourUsd * pool.gpusPerReplica,
  });
  if (!model) return null;
  const slack = (1 - ctx.control.slo_attainment_target) * (sloMs ?? e2eSloMs!);
  return model.unexplainedQueueMs > slack ? null : model;
}
