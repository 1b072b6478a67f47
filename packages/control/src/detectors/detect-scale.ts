import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, readWeights } from './detect-context.ts';
import { estimateUtilization, isFailing, readLoad } from './pool-signals.ts';
import { errorBudget } from '../objective/operating-bounds.ts';
import type { ScaleInputs } from './scale-inputs.ts';
import { drainingTo, readScaleReadiness } from './scale-readiness.ts';
import { judgeScaleUp } from './judge-scale-up.ts';
import { judgeScaleIn } from './judge-scale-in.ts';
import { judgeRelease } from './judge-release.ts';

// Load-bound TTFT → more replicas; spare capacity that N−1 replicas can carry within the SLO →
// fewer. The objective is cost per successful task under the SLO: a replica that holds no SLO up
// is pure cost, a queue that breaks the SLO turns paid work into failed tasks. A scale-up that
// would buy fewer tasks within the SLO than it costs is only proposed, for a human to weigh.

/**
 * `shiftedForResource`: pools whose traffic a memory-bound or cache-affinity shift moves this tick;
 * `plannedWeights`: the routing weights this tick's shifts ask for, by model.
 */
export function detectScale(
  ctx: DetectContext,
  shiftedForResource: ReadonlySet<string>,
  plannedWeights: ReadonlyMap<string, Record<string, number>> = new Map(),
): Candidate[] {
  const out: Candidate[] = [];
  // Replica counts proposed this tick, so two peers are not both scaled in against each other.
  const planned = new Map<string, number>();
  for (const pool of ctx.obs.pools) {
    const candidate = judgePool(
      ctx,
      pool,
      planned,
      shiftedForResource.has(pool.pool),
      shareGain(ctx, pool, plannedWeights),
    );
    if (!candidate) continue;
    out.push(candidate);
    if (candidate.kind === 'scale') planned.set(pool.pool, candidate.action.to);
  }
  return out;
}

function judgePool(
  ctx: DetectContext,
  pool: PoolView,
  planned: ReadonlyMap<string, number>,
  shiftedForResource: boolean,
  gain: number,
): Candidate | null {
  const { tuning, control, slo } = ctx;
  if (!readScaleReadiness(ctx, pool).settled) return null;
  // Replicas removed by a scale-in are paid for until they drain their in-flight requests: size
  // from the count asked for, and do not ask for the same scale-in again meanwhile.
  const draining = drainingTo(ctx, pool);
  const replicas = draining ?? pool.replicas ?? ctx.state.actuated.replicas[pool.pool] ?? null;
  if (replicas === null) return null;
  const learning = ctx.state.learning.get(pool.pool);
  const ratePerS = Math.max(pool.fastRatePerS, pool.mainRatePerS);
  const s: ScaleInputs = {
    pool,
    replicas,
    ratePerS,
    floor: ratePerS > 0 ? Math.max(1, pool.minReplicas) : pool.minReplicas,
    ceiling: pool.maxReplicas ?? Number.POSITIVE_INFINITY,
    learning,
    util: estimateUtilization(pool, ratePerS, replicas, learning),
    load: readLoad(pool, learning, tuning),
    sloMs: slo.ttft_ms ?? null,
    e2eSloMs: slo.e2e_ms ?? null,
    costPerReplicaHour: pool.gpuHourUsd === null ? null : pool.gpuHourUsd * pool.gpusPerReplica,
    failing: isFailing(
      pool.fast?.errorRate ?? null,
      pool.fast?.requests ?? 0,
      tuning,
      errorBudget(ctx.control),
    ),
    shiftedForResource,
    shareGain: gain,
  };
  return (
    judgeScaleUp(ctx, s) ??
    (draining === null
      ? (judgeRelease(ctx, s) ?? judgeScaleIn(ctx, s, control.target_utilization, planned))
      : null)
  );
}

/**
 * How much a shift planned this tick multiplies the pool's load: its planned weight over the weight in
 * effect (≥ 1; infinite for a pool given traffic it had no share of). Its window has not seen that load.
 */
function shareGain(
  ctx: DetectContext,
  pool: PoolView,
  plannedWeights: ReadonlyMap<string, Record<string, number>>,
): number {
  const planned = pool.model === null ? undefined : plannedWeights.get(pool.model);
  if (!planned || pool.model === null) return 1;
  const peers = ctx.obs.pools.filter((p) => p.model === pool.model);
  const now = readWeights(ctx, pool.model, peers)[pool.pool] ?? 0;
  const next = planned[pool.pool] ?? 0;
  if (next <= now) return 1;
  return now > 0 ? next / now : Number.POSITIVE_INFINITY;
}
