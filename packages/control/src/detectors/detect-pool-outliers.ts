import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import {
  MIN_WEIGHT_STEP,
  type DetectContext,
  evidence,
  groupByModel,
  isCircuitOpen,
  readMemory,
  readWeights,
} from './detect-context.ts';
import { planPeerCapacity } from './plan-peer-capacity.ts';
import { readLoad, round, summarizeScope } from './pool-signals.ts';
import { anyOf, confidenceOf, ratioZ } from '../objective/confidence.ts';
import {
  type PoolAssessment,
  assessPoolAgainstPeers,
  describe,
  describeEvidence,
  readSlowness,
  severity,
} from './assess-pool-against-peers.ts';
import {
  keptByScaleIn,
  moveShare,
  peersLackRoom,
  predictedGoodput,
  readyCapacityPart,
} from './peer-headroom.ts';

// One pool's errors or latency against its peers serving the same model (packages/control/README.md): the pool is
// faulty, not overloaded, so more replicas of it would not help — take traffic away (shift_traffic)
// and, when it is clearly broken, stop sending it any (circuit_break). Judged on the short window so a
// degraded pool is caught within two control intervals.

/**
 * The pools faulty against their peers serving the same model (errors or latency outliers): what
 * every detector of the tick treats as suspect. Computed once, before the detectors run, from the
 * same assessment detectPoolOutliers acts on.
 */
export function findSuspects(ctx: DetectContext): Set<string> {
  const suspects = new Set<string>();
  for (const [, pools] of groupByModel(ctx.obs.pools)) {
    if (pools.length < 2) continue;
    for (const p of pools) {
      const a = assessPoolAgainstPeers(ctx, p, pools);
      if (a.errorOutlier || a.latencyOutlier) suspects.add(p.pool);
    }
  }
  return suspects;
}

export function detectPoolOutliers(ctx: DetectContext): Candidate[] {
  const out: Candidate[] = [];
  const { tuning } = ctx;
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    if (pools.length < 2) continue;
    const assessed = pools.map((p) => assessPoolAgainstPeers(ctx, p, pools));
    const outliers = assessed.filter((a) => a.errorOutlier || a.latencyOutlier);
    if (outliers.length === 0) {
      const slow = reportSlowGpu(ctx, model, pools, assessed);
      if (slow) out.push(slow);
      continue;
    }
    // One incident per model per tick: the worst pool. Failing every pool at once is not an outlier.
    if (outliers.length === assessed.filter((a) => a.requests > 0).length) continue;
    const worst = outliers.reduce((x, y) => (severity(y) > severity(x) ? y : x));
    const pool = worst.pool.pool;
    const streak = (ctx.state.learning.get(pool)?.outlierStreak ?? 0) + 1;
    const weights = readWeights(ctx, model, pools);
    const peers = pools.filter(
      (p) => p.pool !== pool && !isCircuitOpen(ctx, p.pool) && !ctx.suspects.has(p.pool),
    );
    if (peers.length === 0) continue;
    // Peers that are themselves load-bound cannot take more: moving traffic there turns errors into
    // timeouts. Their capacity has to come first (the scale policy); the shift is only proposed, for a
    // human who knows more — the incident is reported either way.
    const peersFull = peers.every((p) => readLoad(p, ctx.state.learning.get(p.pool), tuning).loadBound);

    const errorRate = worst.errorRate ?? 0;
    const slowdown = readSlowness(worst);
    // Break only a pool that is mostly useless: many errors, or so slow that little capacity is left.
    // A partly degraded pool keeps the share of traffic its remaining capacity can carry, so its peers
    // are not flooded while their new replicas start.
    // Peers that cannot grow now (a scale-in still inside its cooldown, or at max_replicas) can only
    // take what they have room for: keep half the traffic on the pool unless it is plainly useless.
    const peersStuck = peers.some(
      (p) => keptByScaleIn(ctx, p) !== null || (p.maxReplicas !== null && (p.replicas ?? 0) >= p.maxReplicas),
    );
    // Replicas lost (crashed, preempted) while their replacements start: the errors are requests that
    // were on them and the overload of the survivors. The pool is short of capacity, not broken; it
    // keeps the share of traffic its ready replicas can carry rather than flooding its peers.
    const ready = worst.pool.readyReplicas;
    const desired = worst.pool.replicas;
    const capacityShare =
      !worst.latencyOutlier && ready !== null && desired !== null && desired > 0 && ready < desired
        ? ready / desired
        : null;
    const broken =
      capacityShare !== null
        ? capacityShare === 0
        : peersStuck
          ? errorRate >= 0.5
          : errorRate >= tuning.circuitBreakErrorRate || slowdown >= tuning.circuitBreakLatencyRatio;
    const current = weights[pool] ?? 0;
    const modelRate = pools.reduce((sum, p) => sum + Math.max(p.fastRatePerS, p.mainRatePerS), 0);
    // A pool broken by slowness alone still completes its requests, at the part of its capacity it
    // has left: it leaves rotation only once its peers carry all of its traffic on the replicas they
    // serve with now. Until then its traffic moves as far as they carry it, below.
    const slowOnly =
      broken && capacityShare === null && !peersStuck && errorRate < tuning.circuitBreakErrorRate;
    const breaks =
      broken &&
      !peersFull &&
      !(slowOnly && peersLackRoom(ctx, peers, current * modelRate, true, weights, true));
    const ev = [...describeEvidence(ctx, worst), evidence(`outlierStreak{pool=${pool}}`, streak, 2, 'ticks')];
    const what = describe(worst);
    // It rests on the pool being an outlier: its faults above its peers' (the fault test's
    // significance), or its slowdown past slowRatio — the surer of the two that holds.
    const confidence = confidenceOf(
      anyOf(
        worst.errorOutlier ? worst.faultZ : Number.NaN,
        worst.latencyOutlier ? ratioZ(slowdown, tuning.slowRatio, worst.requests, 'above') : Number.NaN,
      ),
      worst.requests,
    );
    // One tick of it may be a transient (a burst of in-flight requests lost with a crashed replica):
    // proposed at once — that is the detection — but auto-applied only once it persists, unless the
    // pool is plainly broken.
    const firstSight =
      streak < 2 && errorRate < tuning.circuitBreakErrorRate
        ? 'seen for one tick only, so it is auto-applied once it persists (a transient, such as the requests lost with a crashed replica, does not)'
        : undefined;
    const scopePools = pools.map((p) => p.pool);
    const modelScope = summarizeScope(pools, 'fast');

    if (breaks && !isCircuitOpen(ctx, pool)) {
      const previous = readMemory(ctx, 'circuit_break', { pool });
      const recentlyBroken =
        previous?.direction === 'increase' &&
        ctx.obs.atNs - previous.appliedNs < BigInt(Math.round(4 * ctx.control.cooldown_s * 1e9));
      const durationS = Math.round(ctx.control.cooldown_s * (recentlyBroken ? 2 : 1));
      out.push({
        kind: 'circuit_break',
        target: { pool },
        action: { open: true, durationS },
        direction: 'increase',
        reason: `Pool ${pool} is failing against its peers serving ${model} (${what}); stop routing to it for ${durationS} s.`,
        evidence: ev,
        expectedImpact: {
          summary: `Requests for ${model} stop failing on ${pool}; error rate of ${model} falls toward its peers'.`,
          errorRate: { from: round(modelScope.errorRate ?? 0), to: round(worst.peerErrorRate ?? 0) },
          ...predictedGoodput(ctx, pools, moveShare(weights, pool, 0, peers)),
        },
        confidence,
        ...(firstSight ? { waits: firstSight } : {}),
        scopePools,
        urgent: true,
      });
    }

    const keep = breaks
      ? 0
      : capacityShare !== null
        ? Math.min(capacityShare, 0.9)
        : peersStuck
          ? 0.5
          : Math.min(
              worst.latencyOutlier ? Math.max(0.2, Math.min(0.7, 1 / slowdown)) : 0.7,
              worst.errorOutlier ? Math.max(0, Math.min(0.7, 1 - 5 * errorRate)) : 0.7,
            );
    // Peers that cannot grow now carry no more than their kept replicas do: a pool that lost
    // replicas keeps at least its own part of the model's ready capacity.
    const ownPart =
      capacityShare !== null && peersStuck && !breaks
        ? readyCapacityPart(ctx, worst.pool, peers, errorRate)
        : null;
    const target = round(ownPart === null ? current * keep : Math.max(current * keep, ownPart), 3);
    if (current - target < MIN_WEIGHT_STEP) continue;
    const moved = current - target;
    const shifted = moveShare(weights, pool, target, peers);
    // A pool that still serves most of its requests (not broken) keeps them until its peers can carry
    // what would move: on peers without that room they would queue instead — a few errors become
    // many timeouts — and the peers' new replicas take minutes to start.
    const noRoom =
      !peersFull && !breaks && peersLackRoom(ctx, peers, moved * modelRate, capacityShare === null, weights);
    // A pool broken by slowness whose peers have no room for its share: the part they carry now moves
    // at once — the most they carry on the replicas they serve with — and their capacity is sized for
    // the rest.
    const nowTarget =
      noRoom && broken
        ? targetWithinRoom(ctx, peers, weights, current, moved, modelRate, capacityShare === null)
        : null;
    // The shift off the faulty pool to weight `to`, with what the reason adds after the move.
    const shiftOff = (
      to: number,
      weightsAfter: Record<string, number>,
      movedNow: number,
      tail: string,
      waits?: string,
    ): Candidate => ({
      kind: 'shift_traffic',
      target: { model, pool },
      action: { weights: weightsAfter },
      direction: 'decrease',
      reason: `Pool ${pool} is an outlier among the pools serving ${model} (${what}); move ${Math.round(movedNow * 100)}% of ${model}'s traffic to ${peers.map((p) => p.pool).join(', ')}${tail}.`,
      evidence: ev,
      expectedImpact: {
        summary: `Fewer ${model} requests land on the faulty pool; goodput of ${model} recovers toward its peers'.`,
        weight: { pool, from: round(current), to },
        errorRate: { from: round(modelScope.errorRate ?? 0), to: round(worst.peerErrorRate ?? 0) },
        ...predictedGoodput(ctx, pools, weightsAfter),
      },
      confidence,
      ...(waits ? { waits } : {}),
      scopePools,
      urgent: true,
      cause: 'incident',
    });
    if (nowTarget !== null) {
      const nowMoved = current - nowTarget;
      out.push(
        shiftOff(
          nowTarget,
          moveShare(weights, pool, nowTarget, peers),
          nowMoved,
          ` now, as much as they carry on the replicas they serve with, and add their capacity for the ${Math.round((moved - nowMoved) * 100)}% more it should shed`,
          firstSight,
        ),
      );
      for (const c of planPeerCapacity(ctx, model, pools, weights, shifted, pool))
        out.push({ ...c, confidence, ...(firstSight ? { waits: firstSight } : {}) });
      continue;
    }
    const why = peersFull
      ? ' once they have room: they are load-bound themselves, so this waits for a human or for their new capacity'
      : noRoom
        ? ' once they have room: at their learned capacity they cannot carry it now, so this waits for a human or for their new capacity'
        : '';
    out.push(
      shiftOff(
        target,
        shifted,
        moved,
        why,
        peersFull || noRoom
          ? 'the peers have no room for it yet: a human decides, or their new capacity lands first'
          : firstSight,
      ),
    );
    if (peersFull) continue;
    // Without room the peers' scale-ups go with the proposed shift, for the same human to approve.
    for (const c of planPeerCapacity(ctx, model, pools, weights, shifted, pool))
      out.push({
        ...c,
        confidence,
        ...(noRoom
          ? { waits: 'it goes with a traffic shift that waits for a human' }
          : firstSight
            ? { waits: firstSight }
            : {}),
      });
  }
  return out;
}

/**
 * The faulty pool's weight after the most of `moved` its peers carry now (peersLackRoom is monotone
 * in the load moved: the pool model by its property test, the capacities by their sum), to a weight
 * step; null when that is less than a step.
 */
function targetWithinRoom(
  ctx: DetectContext,
  peers: readonly PoolView[],
  weights: Readonly<Record<string, number>>,
  current: number,
  moved: number,
  modelRate: number,
  calmBound: boolean,
): number | null {
  let carried = 0;
  let lacking = moved;
  while (lacking - carried > MIN_WEIGHT_STEP / 2) {
    const mid = (carried + lacking) / 2;
    if (peersLackRoom(ctx, peers, mid * modelRate, calmBound, weights)) lacking = mid;
    else carried = mid;
  }
  return carried < MIN_WEIGHT_STEP ? null : round(current - carried, 3);
}

/**
 * A pool slow even at its fastest requests while its errors and typical latency do not (yet) make it
 * an outlier — typically load on every pool hides it. Reported as a proposal for a human: moving its
 * traffic before the peers can carry the next burst costs more than the slow GPU does.
 */
function reportSlowGpu(
  ctx: DetectContext,
  model: string,
  pools: PoolView[],
  assessed: PoolAssessment[],
): Candidate | null {
  const slow = assessed.filter((a) => a.slowAtFastest);
  if (slow.length === 0 || slow.length === assessed.filter((a) => a.requests > 0).length) return null;
  const worst = slow.reduce((x, y) => ((y.fastestSlowdown ?? 0) > (x.fastestSlowdown ?? 0) ? y : x));
  const pool = worst.pool.pool;
  const peers = pools.filter(
    (p) => p.pool !== pool && !isCircuitOpen(ctx, p.pool) && !ctx.suspects.has(p.pool),
  );
  if (peers.length === 0) return null;
  const weights = readWeights(ctx, model, pools);
  const current = weights[pool] ?? 0;
  const factor = worst.fastestSlowdown ?? 1;
  // The pool keeps the share its slowed engines still carry.
  const target = round(current * Math.max(0.2, 1 / factor), 3);
  if (current - target < MIN_WEIGHT_STEP) return null;
  const moved = current - target;
  const { tuning } = ctx;
  return {
    kind: 'shift_traffic',
    target: { model, pool },
    action: { weights: moveShare(weights, pool, target, peers) },
    direction: 'decrease',
    reason: `Pool ${pool}'s GPUs look slow: even its fastest requests prefill ${round(factor, 1)}× slower than usual while its peers' run at ${round(worst.peerFastestSlowdown ?? 1, 1)}× — load does not explain that. Moving ${Math.round(moved * 100)}% of ${model}'s traffic to ${peers.map((p) => p.pool).join(', ')} is proposed for a human: its errors and typical latency do not show it yet, and its peers may not carry the next burst.`,
    evidence: describeEvidence(ctx, worst),
    expectedImpact: {
      summary: `Fewer ${model} requests run on the slow GPUs of ${pool}.`,
      weight: { pool, from: round(current), to: target },
      ...predictedGoodput(ctx, pools, moveShare(weights, pool, target, peers)),
    },
    confidence: confidenceOf(ratioZ(factor, tuning.slowRatio, worst.requests, 'above'), worst.requests),
    waits: 'its errors and typical latency do not show the slowdown yet, so a human decides',
    scopePools: pools.map((p) => p.pool),
    cause: 'incident',
  };
}
