import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import type { DetectContext } from './detect-context.ts';
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

/** `shiftedForResource`: pools whose traffic a memory-bound or cache-affinity shift moves this tick. */
export function detectScale(ctx: DetectContext, shiftedForResource: ReadonlySet<string>): Candidate[] {
  const out: Candidate[] = [];
  // Replica counts proposed this tick, so two peers are not both scaled in against each other.
  const planned = new Map<string, number>();
  for (const pool of ctx.obs.pools) {
    const candidate = judgePool(ctx, pool, planned, shiftedForResource.has(pool.pool));
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
  };
  return (
    judgeScaleUp(ctx, s) ??
    (draining === null
      ? (judgeRelease(ctx, s) ?? judgeScaleIn(ctx, s, control.target_utilization, planned))
      : null)
  );
}
