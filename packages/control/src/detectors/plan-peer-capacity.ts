import { clearlyWithinSloShare } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, MIN_WEIGHT_STEP, evidence } from './detect-context.ts';
import { readScaleReadiness } from './scale-readiness.ts';
import { isQueueNegligible, learnedCapacity, round } from './pool-signals.ts';
import { readPoolModel } from './read-pool-model.ts';
import { sizePool } from '../objective/size-pool.ts';
import { errorBudget } from '../objective/operating-bounds.ts';

/**
 * Capacity follows traffic: when a shift moves a share of a model's traffic onto peers — away from a
 * failing pool (`from`), or back to a recovering one (`from` null) — size each receiving pool for its
 * new load now rather than waiting for it to queue (a cold start takes minutes). Where the pool model
 * can judge the peer, it sizes it: the fewest replicas that surely reach what the objective requires
 * of its tasks with its own recent requests packed to the new load (objective/size-pool.ts) — long
 * prompts that miss the SLO on any count buy no replicas, a queue that would build does. Otherwise,
 * with a learned capacity the pool is sized to the target utilization; without one it grows in
 * proportion to its traffic, on the grounds that it holds its current load within the SLO.
 */
export function planPeerCapacity(
  ctx: DetectContext,
  model: string,
  pools: readonly PoolView[],
  before: Record<string, number>,
  after: Record<string, number>,
  from: string | null,
): Candidate[] {
  const out: Candidate[] = [];
  const modelRate = pools.reduce((s, p) => s + Math.max(p.fastRatePerS, p.mainRatePerS), 0);
  if (modelRate <= 0) return out;
  for (const peer of pools) {
    const added = (after[peer.pool] ?? 0) - (before[peer.pool] ?? 0);
    if (added <= MIN_WEIGHT_STEP || peer.pool === from) continue;
    const replicas = peer.replicas ?? ctx.state.actuated.replicas[peer.pool] ?? null;
    if (replicas === null || replicas <= 0) continue;
    if (!readScaleReadiness(ctx, peer).settled) continue;
    const rateNow = Math.max(peer.fastRatePerS, peer.mainRatePerS);
    const rateAfter = rateNow + added * modelRate;
    const learning = ctx.state.learning.get(peer.pool);
    const capacity = learnedCapacity(learning, 'saturated');
    const calm = learning?.calmRatePerReplica ?? null;
    // Known capacity: size to the target utilization. Otherwise no replica should carry more than
    // the most per replica the pool is known to serve well: its calm history or what it carries now.
    // A peer far inside its SLO with no queueing has visible headroom: half again its current load.
    const ttftP95 = peer.main?.ttftMs.p95 ?? null;
    const sloMs = ctx.slo.ttft_ms ?? null;
    const idle =
      sloMs !== null &&
      ttftP95 !== null &&
      ttftP95 <= clearlyWithinSloShare(ctx.tuning) * sloMs &&
      isQueueNegligible(peer.main, sloMs, errorBudget(ctx.control));
    const servedWell = Math.max(calm ?? 0, ((idle ? 1.5 : 1) * rateNow) / replicas);
    const poolModel = readPoolModel(ctx, peer);
    const byModel =
      poolModel && peer.mainRatePerS > 0
        ? sizePool(poolModel, replicas, {
            attainmentTarget: ctx.control.slo_attainment_target,
            loadFactor: rateAfter / peer.mainRatePerS,
            floor: replicas,
            ceiling: peer.maxReplicas ?? Number.POSITIVE_INFINITY,
          })
        : null;
    const sized = byModel
      ? byModel.surely
      : capacity && capacity > 0
        ? Math.ceil(rateAfter / (capacity * ctx.control.target_utilization))
        : servedWell > 0
          ? Math.ceil(rateAfter / servedWell)
          : replicas + 1;
    const to = Math.min(peer.maxReplicas ?? Number.POSITIVE_INFINITY, sized);
    if (to <= replicas) continue;
    const predicted =
      byModel && poolModel
        ? ` Its last ${poolModel.observation.arrivals.length} requests replayed at that load: ${Math.round(byModel.before.taskWithinSloShare * 100)}% of its tasks within the SLO on ${replicas}, ${Math.round(poolModel.predict(to, rateAfter / peer.mainRatePerS).taskWithinSloShare * 100)}% on ${to} (required ${Math.round(byModel.required * 100)}%).`
        : '';
    out.push({
      kind: 'scale',
      target: { pool: peer.pool },
      action: { from: replicas, to },
      direction: 'increase',
      reason: `Pool ${peer.pool} ${from === null ? 'takes back' : 'takes over'} ${Math.round(added * 100)}% of ${model}'s traffic${from === null ? '' : ` from ${from}`} (about ${round(rateNow, 1)} → ${round(rateAfter, 1)} requests/s); add ${to - replicas} replica${to - replicas === 1 ? '' : 's'} before it queues (${replicas} → ${to}).${predicted}`,
      evidence: [
        evidence(`requestsPerS{pool=${peer.pool}}`, rateNow, null, ctx.fastWindowLabel),
        evidence(`expectedRequestsPerS{pool=${peer.pool}}`, rateAfter, null, ctx.fastWindowLabel),
        evidence(`capacityPerReplicaPerS{pool=${peer.pool}}`, capacity, null, 'learned'),
        evidence(`calmRatePerReplica{pool=${peer.pool}}`, calm, null, 'learned'),
        evidence(`replicas{pool=${peer.pool}}`, replicas, peer.maxReplicas, 'now'),
      ],
      expectedImpact: {
        summary: `${peer.pool} absorbs the shifted traffic without breaking the SLO once the new replicas are warm.`,
        weight: {
          pool: peer.pool,
          from: round(before[peer.pool] ?? 0, 3),
          to: round(after[peer.pool] ?? 0, 3),
        },
        requestsPerS: { from: round(rateNow, 2), to: round(rateAfter, 2) },
        replicas: { from: replicas, to },
      },
      confidence: 0,
      scopePools: [peer.pool],
      urgent: true,
      cause: from === null ? 'recovery' : 'incident',
    });
  }
  return out;
}
