import type { PoolView } from '../observe-fleet.ts';
import {
  type DetectContext,
  isWithinCooldown,
  loadWindowsOf,
  normalizeWeights,
  readMemory,
} from './detect-context.ts';
import { learnedCapacity, round } from './pool-signals.ts';
import { carriesMore } from '../objective/carries-more.ts';
import { readPoolModel } from './read-pool-model.ts';
import type { ImpactChange } from '@governor/conventions';
import { predictShiftGoodput } from '../objective/predict-shift.ts';
import { loadOutlookPerS } from '../model/forecast-load.ts';

// Whether the peers of a faulty pool have the room to take its traffic, and the weights that move it.

/**
 * The peers cannot carry `movedRatePerS` more now. Where every peer can be modelled, their models
 * say (peersCarryByModel): each must carry its part within the objective. Otherwise by capacities:
 * their spare requests/s at the target utilization of the capacity they showed while saturated
 * (serving replicas) add up to less — the cautious estimate, as for a scale-in: load moved onto them that they cannot carry breaks their SLO until it is rolled
 * back. A peer whose scale-in is still inside its cooldown cannot grow before it ends (that would be
 * a reversal): it counts only the replicas it kept and, without a learned capacity and with
 * `calmBound`, the load per replica it has carried calmly. (Not for a pool that lost replicas: its
 * survivors' errors are retried by clients and multiply where they stay, so its share moves.) While
 * a peer's capacity is unknown: false, unless `unknownLacks` (where moving all of it must be known to
 * be carried).
 */
export function peersLackRoom(
  ctx: DetectContext,
  peers: readonly PoolView[],
  movedRatePerS: number,
  calmBound: boolean,
  weights: Readonly<Record<string, number>>,
  unknownLacks = false,
): boolean {
  const byModel = peersCarryByModel(ctx, peers, movedRatePerS, weights);
  if (byModel !== null) return !byModel;
  let spare = 0;
  for (const p of peers) {
    const learning = ctx.state.learning.get(p.pool);
    const capacity = learnedCapacity(learning, 'saturated');
    const kept = keptByScaleIn(ctx, p);
    const replicas = readyKeptReplicas(ctx, p);
    const rate = Math.max(p.fastRatePerS, p.mainRatePerS);
    const perReplica = capacity
      ? capacity * ctx.control.target_utilization
      : kept !== null && calmBound
        ? (learning?.calmRatePerReplica ?? null)
        : null;
    if (!perReplica || replicas <= 0) return unknownLacks;
    spare += Math.max(0, replicas * perReplica - rate);
  }
  return spare < movedRatePerS;
}

/**
 * Whether each peer carries its part of `movedRatePerS` (the parts moveShare gives them: in
 * proportion to their weights) within the objective, by its model (objective/carries-more.ts) on the
 * replicas it serves with now, on top of its own load as a scale-in of it would be sized for (the load
 * outlook until verification, model/forecast-load.ts): a peer is not given more than its sizing
 * would let it keep. Null when a peer cannot be modelled, and the capacities decide.
 */
function peersCarryByModel(
  ctx: DetectContext,
  peers: readonly PoolView[],
  movedRatePerS: number,
  weights: Readonly<Record<string, number>>,
): boolean | null {
  const total = peers.reduce((sum, p) => sum + (weights[p.pool] ?? 0), 0);
  let all = true;
  for (const p of peers) {
    const model = readPoolModel(ctx, p);
    if (!model || !(p.mainRatePerS > 0)) return null;
    const part = movedRatePerS * (total > 0 ? (weights[p.pool] ?? 0) / total : 1 / peers.length);
    const own = loadOutlookPerS(loadWindowsOf(ctx, p), ctx.control.verify_after_s).ratePerS;
    const outlook = carriesMore(
      model,
      readyKeptReplicas(ctx, p),
      (own + part) / p.mainRatePerS,
      ctx.control.slo_attainment_target,
    );
    all &&= outlook.carries;
  }
  return all;
}

/**
 * The pool's part of its model's ready capacity that serves requests: its ready replicas, less the
 * share of requests it fails, and each peer's ready replicas (no more than a scale-in inside its
 * cooldown kept), each at its capacity per replica — learned while saturated, else the most it
 * served calmly (a lower bound). Null while one is not known.
 */
export function readyCapacityPart(
  ctx: DetectContext,
  pool: PoolView,
  peers: readonly PoolView[],
  errorRate: number,
): number | null {
  const capacityOf = (p: PoolView, replicas: number): number | null => {
    const learning = ctx.state.learning.get(p.pool);
    const perReplica = learnedCapacity(learning, 'saturated') ?? learning?.calmRatePerReplica ?? null;
    return perReplica === null ? null : perReplica * replicas;
  };
  const ready = capacityOf(pool, pool.readyReplicas ?? 0);
  if (ready === null) return null;
  const own = ready * Math.max(0, 1 - errorRate);
  let total = own;
  for (const p of peers) {
    const c = capacityOf(p, readyKeptReplicas(ctx, p));
    if (c === null) return null;
    total += c;
  }
  return total > 0 ? own / total : null;
}

/** The replicas a peer serves with now: those ready, and no more than a scale-in inside its cooldown kept. */
function readyKeptReplicas(ctx: DetectContext, pool: PoolView): number {
  const kept = keptByScaleIn(ctx, pool);
  return Math.min(pool.readyReplicas ?? pool.replicas ?? 0, kept ?? Number.POSITIVE_INFINITY);
}

/**
 * The replicas a pool kept after a scale-in (Governor's, or one seen from outside) while it is inside
 * its cooldown; else null.
 */
export function keptByScaleIn(ctx: DetectContext, pool: PoolView): number | null {
  const last = readMemory(ctx, 'scale', { pool: pool.pool });
  return isWithinCooldown(ctx, last) && last.direction === 'decrease'
    ? (last.expectReplicas ?? pool.replicas ?? 0)
    : null;
}

/** Weights with `pool` down to `target`, the rest spread over `peers` in proportion to their weights. */
export function moveShare(
  weights: Record<string, number>,
  pool: string,
  target: number,
  peers: readonly PoolView[],
): Record<string, number> {
  const moved = (weights[pool] ?? 0) - target;
  const peerTotal = peers.reduce((sum, p) => sum + (weights[p.pool] ?? 0), 0);
  const next: Record<string, number> = { ...weights, [pool]: target };
  for (const p of peers) {
    const share = peerTotal > 0 ? (weights[p.pool] ?? 0) / peerTotal : 1 / peers.length;
    next[p.pool] = (weights[p.pool] ?? 0) + moved * share;
  }
  return normalizeWeights(next);
}

/**
 * What spreading a model's traffic over `pools` by `weights` does to the share of its tasks within
 * the SLO, by the pools' models on the replicas they serve with now (objective/predict-shift.ts), as
 * an expected impact; empty where there is no prediction (a pool that gains traffic cannot be
 * modelled). Over the control window, as the models read the pools' requests.
 */
export function predictedGoodput(
  ctx: DetectContext,
  pools: readonly PoolView[],
  weights: Readonly<Record<string, number>>,
): { withinSloShare?: ImpactChange } {
  const prediction = predictShiftGoodput(
    pools.map((p) => ({
      pool: p.pool,
      ratePerS: p.mainRatePerS,
      goodput: p.main?.goodput ?? null,
      replicas: readyKeptReplicas(ctx, p),
      model: readPoolModel(ctx, p),
    })),
    weights,
  );
  if (!prediction) return {};
  return { withinSloShare: { from: round(prediction.from, 4), to: round(prediction.to, 4) } };
}
