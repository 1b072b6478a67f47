import type { Candidate } from '../engine/control-types.ts';
import { type DetectContext, MIN_WEIGHT_STEP, evidence, readMemory } from './detect-context.ts';
import { isRetryStorming } from './detect-retry-budget.ts';
import { round } from './pool-signals.ts';
import { confidenceOf, ratioZ } from '../objective/confidence.ts';
import { type ScaleInputs, hourlyCost } from './scale-inputs.ts';
import { readPoolModel } from './read-pool-model.ts';
import { sizePool } from '../objective/size-pool.ts';

/**
 * Capacity follows traffic back down — the mirror of plan-peer-capacity.ts. The replicas a pool was
 * given for a share of its model's traffic that Governor moved onto it are released in proportion as
 * Governor's routing takes that share back off (the shift rolled back, the faulty peer given its
 * share back, a later shift): between the replicas it holds for its weight then and the ones that
 * carried its own share before, as its weight falls between the two — never below the latter. The
 * weight is Governor's own, known at once: no control window of watching the load fall is needed,
 * which the scale-in rules wait for (judge-scale-in.ts). Where the pool model can judge, no fewer than
 * it says surely hold; verification rolls it back if goodput falls.
 */
export function judgeRelease(ctx: DetectContext, s: ScaleInputs): Candidate | null {
  const { pool, replicas } = s;
  const memory = readMemory(ctx, 'scale', { pool: pool.pool });
  const held = memory?.forShare;
  if (!held || held.weight - held.baseWeight < MIN_WEIGHT_STEP) return null;
  const weight = ctx.state.actuated.weights[held.model]?.[pool.pool];
  if (weight === undefined || held.weight - weight < MIN_WEIGHT_STEP) return null;
  // Its own failures, or a retry storm multiplying every pool's requests, are load its weight does
  // not show; a model turning tasks away has no capacity to spare (as for any scale-in).
  if (ctx.suspects.has(pool.pool) || s.failing || isRetryStorming(ctx) || s.shareGain > 1) return null;
  if (ctx.state.actuated.shed[`model=${held.model}`] !== undefined) return null;
  const added = replicas - held.baseReplicas;
  // Within the smallest weight step of its weight before, the pool is back at its own share.
  const above = weight - held.baseWeight;
  const stillHeld = above < MIN_WEIGHT_STEP ? 0 : above / (held.weight - held.baseWeight);
  const byShare = Math.max(
    held.baseReplicas,
    s.floor,
    Math.ceil(held.baseReplicas + added * stillHeld - 1e-9),
  );
  if (byShare >= replicas) return null;
  // Where the pool model can judge, it stops the release where it says the pool surely reaches what
  // the objective requires of its tasks at the load its weight now sends it, as every scale-in does.
  const poolModel = readPoolModel(ctx, pool);
  const modelRate = ctx.obs.pools
    .filter((p) => p.model === held.model)
    .reduce((sum, p) => sum + Math.max(p.fastRatePerS, p.mainRatePerS), 0);
  const to =
    poolModel && pool.mainRatePerS > 0 && modelRate > 0
      ? sizePool(poolModel, replicas, {
          attainmentTarget: ctx.control.slo_attainment_target,
          loadFactor: (modelRate * weight) / pool.mainRatePerS,
          floor: byShare,
          ceiling: replicas,
        }).surely
      : byShare;
  if (to >= replicas) return null;
  const requests = pool.main?.requests ?? 0;
  return {
    kind: 'scale',
    target: { pool: pool.pool },
    action: { from: replicas, to },
    direction: 'decrease',
    reason: `Governor's routing moved ${Math.round((held.weight - weight) * 100)}% of ${held.model}'s traffic back off pool ${pool.pool} (its weight ${round(held.weight, 2)} → ${round(weight, 2)}; ${round(held.baseWeight, 2)} before it was given replicas for more); release them as its share falls, keeping at least the ${held.baseReplicas} that carried its own share (${replicas} → ${to}).`,
    evidence: [
      evidence(`weight{pool=${pool.pool},model=${held.model}}`, weight, held.weight, 'routing'),
      evidence(`requestsPerS{pool=${pool.pool}}`, s.ratePerS, null, ctx.windowLabel),
      evidence(`replicas{pool=${pool.pool}}`, replicas, held.baseReplicas, 'now'),
    ],
    expectedImpact: {
      summary: `${pool.pool} keeps the replicas its remaining share needs: each carries no more than it did before the shift or while it held the larger share.`,
      replicas: { from: replicas, to },
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
    },
    // It rests on the pool's load having fallen with its weight: Governor sets the weight, and the
    // requests it now sends are read with Poisson uncertainty.
    confidence: confidenceOf(ratioZ(held.weight, weight, requests, 'above'), requests),
    scopePools: [pool.pool],
  };
}
