import { boundShare, clearlyWithinSloShare } from '../engine/control-tuning.ts';
import type { ExpectedImpact, ScaleAction } from '@governor/conventions';
import type { Candidate, PoolLearning } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, evidence, isCircuitOpen, isRecovering, readMemory } from './detect-context.ts';
import { isRetryStorming } from './detect-retry-budget.ts';
import type { ControlTuning } from '../engine/control-tuning.ts';
import { secondsToNs } from '../time.ts';
import { isDark, isQueueNegligible, readQueueShare, round, MIN_P95_SAMPLE } from './pool-signals.ts';
import { anyOf, confidenceOf, predictionZ, ratioZ } from '../objective/confidence.ts';
import { type ScaleInputs, hourlyCost } from './scale-inputs.ts';
import { type ReplayedScaleIn, canModelJudge, replayScaleIn } from './replay-scale-in.ts';
import { errorBudget } from '../objective/operating-bounds.ts';

// Spare capacity that fewer replicas carry within the SLO → fewer replicas: the pool model's cheapest
// feasible count wherever it can judge the pool (a known capacity bounds it); elsewhere, for a calm
// pool, by a known capacity, by a per-replica load served calmly before, or one replica at a time far
// inside the SLO.

export function judgeScaleIn(
  ctx: DetectContext,
  s: ScaleInputs,
  target: number,
  planned: ReadonlyMap<string, number>,
): Candidate | null {
  const { tuning, windowLabel, fastWindowLabel } = ctx;
  const { pool, replicas, util, load, sloMs } = s;
  // A pool scaled in to one replica leans on its peers when that replica is lost (preempted,
  // crashed): they must hold two between them, so the model never rests on a single replica.
  const floor =
    s.floor < 2 && s.ratePerS > 0 && !peersHoldSpare(ctx, pool, planned) ? Math.min(2, replicas) : s.floor;
  if (replicas <= floor) return null;
  if (s.ratePerS <= 0) {
    // Silence is its own evidence, one observation per control interval Governor has seen of it
    // (a store that began within the window has seen fewer): the confidence says how sure it is,
    // and the policy's minimum confidence how sure it must be.
    const seenMs = Math.min(ctx.obs.coveredMs, ctx.obs.windowMs);
    const observations = Math.floor(seenMs / (ctx.control.interval_s * 1000));
    if (observations < 1 || couldNotServe(ctx, pool)) return null;
    const partial = seenMs < ctx.obs.windowMs;
    const seenS = Math.round(seenMs / 1000);
    // (A shift onto a pool with no traffic is traffic recovery's probe: the replicas its later
    // shares need come with them, plan-peer-capacity.ts.)
    return {
      kind: 'scale',
      target: { pool: pool.pool },
      action: { from: replicas, to: floor },
      direction: 'decrease',
      reason: `Pool ${pool.pool} served no requests in the last ${partial ? `${seenS} s (all Governor has seen)` : windowLabel}; keep ${floor} replica${floor === 1 ? '' : 's'} (${replicas} → ${floor}).`,
      evidence: [
        evidence(`requests{pool=${pool.pool}}`, 0, 0, partial ? `${seenS}s` : windowLabel),
        evidence(`replicas{pool=${pool.pool}}`, replicas, floor, 'now'),
      ],
      expectedImpact: {
        summary: `Idle replicas stop costing money; nothing is served by ${pool.pool} now.`,
        costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, floor) },
      },
      confidence: confidenceOf(Number.POSITIVE_INFINITY, observations),
      scopePools: [pool.pool],
    };
  }
  // Evidence for N−1 needs a whole control window of telemetry: a store that began within it (a
  // fleet or a store just started) shows too little of the load's variation to take a replica away.
  if (ctx.obs.coveredMs < ctx.obs.windowMs) return null;
  // A shift this tick gives it more traffic than its window shows: only the model, replaying its
  // requests at that load, may judge it (replay-scale-in.ts).
  if (s.shareGain > 1 && (!Number.isFinite(s.shareGain) || !canModelJudge(ctx, s))) return null;
  if (isLoadUnseen(ctx, pool, s.learning)) return null;
  const main = pool.main;
  if (!main) return null;
  if (isPeerScalingIn(ctx, pool, planned)) return null;
  // A model that turns tasks away has no capacity to spare: its pools keep their replicas until the
  // shed classes are readmitted (detect-shed-load.ts).
  if (pool.model !== null && ctx.state.actuated.shed[`model=${pool.model}`] !== undefined) return null;
  if (main.requests < MIN_P95_SAMPLE) return judgeSparseScaleIn(ctx, s, floor);
  const mainTtftP95 = main.ttftMs.p95;
  const mainQueueShare = readQueueShare(main);
  // Scale-in changes load, not a prompt's own prefill time: the pool must be steady (prefill at its
  // uncontended speed, failures within the error budget, not an outlier). Nor during a retry storm:
  // it multiplies every pool's requests, which the pool's own signals do not show yet. (A failing
  // peer's traffic is planned for by the shift that moves it.)
  const steady =
    (load.contention ?? 1) < tuning.usualRatio &&
    (main.errorRate ?? 0) <= errorBudget(ctx.control) &&
    !ctx.suspects.has(pool.pool);
  if (!steady || isRetryStorming(ctx)) return null;
  const maxStep = maxScaleInStep(replicas, tuning);
  const common = {
    kind: 'scale' as const,
    target: { pool: pool.pool },
    direction: 'decrease' as const,
    scopePools: [pool.pool],
  };
  const baseEvidence = [
    evidence(`ttftMs.p95{pool=${pool.pool}}`, mainTtftP95, sloMs, windowLabel),
    evidence(`queueShareOfTtft{pool=${pool.pool}}`, mainQueueShare, boundShare(tuning) / 2, windowLabel),
    evidence(`requestsPerS{pool=${pool.pool}}`, s.ratePerS, null, windowLabel),
  ];
  // Where the pool model can judge (an SLO, the pool's uncontended speed and enough requests), it
  // decides: the cheapest count (at most one step down) that it says surely reaches what the
  // objective requires of the pool's tasks at the load forecast until verification
  // (objective/plan-scale.ts), calm or queueing. Where it cannot, a pool that queues is not scaled in
  // (queueing alone does not say how much), and a calm one (next to no queueing) is sized by what is
  // known of its capacity, below.
  // A known capacity bounds it too: no fewer replicas than keep utilization at the target.
  if (canModelJudge(ctx, s)) {
    const known = util.value !== null && util.capacityKnown ? util.value : null;
    const byCapacity = known === null ? floor : Math.ceil((replicas * known) / target);
    if (byCapacity >= replicas) return null;
    const byModel = judgeScaleInByModel(ctx, s, Math.max(floor, replicas - maxStep, byCapacity));
    if (!byModel) return null;
    const capacityEvidence =
      known === null
        ? []
        : [
            evidence(`utilization{pool=${pool.pool},basis=${util.basis}}`, known, target, fastWindowLabel),
            evidence(
              `utilizationAtNMinus1{pool=${pool.pool}}`,
              (known * replicas) / (replicas - 1),
              target,
              fastWindowLabel,
            ),
          ];
    return { ...common, ...byModel, evidence: [...baseEvidence, ...capacityEvidence, ...byModel.evidence] };
  }
  const calm =
    (load.queueShare ?? 0) < boundShare(tuning) / 2 && (mainQueueShare ?? 0) < boundShare(tuning) / 2;
  if (!calm) return null;

  // (a) Known capacity: N−1 (and the target count) stay under the target utilization.
  if (util.value !== null && util.capacityKnown) {
    const sized = Math.max(floor, Math.ceil((replicas * util.value) / target), replicas - maxStep);
    const utilAtMinusOne = (util.value * replicas) / (replicas - 1);
    if (sized >= replicas || utilAtMinusOne > target) return null;
    const replay = replayScaleIn(ctx, s, sized);
    if (!replay) return null;
    const to = replay.to;
    const utilAfter = (util.value * replicas) / to;
    return {
      ...common,
      action: { from: replicas, to },
      reason: `Pool ${pool.pool} runs at utilization ${round(util.value, 2)} (${util.basis}) within its SLO; ${to} replica${to === 1 ? '' : 's'} would run at ${round(utilAfter, 2)} (target ${target}) (${replicas} → ${to}).${replay.note}`,
      evidence: [
        ...baseEvidence,
        evidence(`utilization{pool=${pool.pool},basis=${util.basis}}`, util.value, target, fastWindowLabel),
        evidence(`utilizationAtNMinus1{pool=${pool.pool}}`, utilAtMinusOne, target, fastWindowLabel),
        ...replay.evidence,
      ],
      expectedImpact: {
        summary: `Same goodput on ${pool.pool} for less money: TTFT p95 stays under ${sloMs ?? 'its current'} ms.`,
        ...replayedTtft(replay),
        utilization: { from: round(util.value, 2), to: round(utilAfter, 2) },
        costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
      },
      // It rests on N−1 replicas staying under the target utilization.
      confidence: confidenceOf(ratioZ(utilAtMinusOne, target, main.requests, 'below'), main.requests),
    };
  }

  // (b) A per-replica load the pool has served calmly before: N−1 replicas each carry no more.
  const calmRate = s.learning?.calmRatePerReplica ?? null;
  if (calmRate !== null && calmRate > 0) {
    const sized = Math.max(floor, Math.ceil(s.ratePerS / calmRate), replicas - maxStep);
    if (sized < replicas) {
      const replay = replayScaleIn(ctx, s, sized);
      if (!replay) return null;
      const to = replay.to;
      const perReplicaAfter = s.ratePerS / to;
      return {
        ...common,
        action: { from: replicas, to },
        reason: `Pool ${pool.pool} is calm at ${round(s.ratePerS / replicas, 2)} requests/s per replica and has served ${round(calmRate, 2)} per replica without queueing or contention; ${to} replica${to === 1 ? '' : 's'} would each carry ${round(perReplicaAfter, 2)} (${replicas} → ${to}).${replay.note}`,
        evidence: [
          ...baseEvidence,
          evidence(`requestsPerSPerReplicaAfter{pool=${pool.pool}}`, perReplicaAfter, calmRate, windowLabel),
          evidence(
            `prefillMsPerTokenVsFloor{pool=${pool.pool}}`,
            load.contention,
            tuning.usualRatio,
            fastWindowLabel,
          ),
          ...replay.evidence,
        ],
        expectedImpact: {
          summary: `Same goodput on ${pool.pool} for less money: each replica carries a load it has carried calmly before.`,
          ...replayedTtft(replay),
          requestsPerSPerReplica: { from: round(s.ratePerS / replicas, 2), to: round(perReplicaAfter, 2) },
          costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
        },
        // It rests on each replica left carrying no more than it has carried calmly.
        confidence: confidenceOf(ratioZ(perReplicaAfter, calmRate, main.requests, 'below'), main.requests),
      };
    }
  }

  // (c) Nothing known yet — or the calm history allows no fewer replicas: one replica at a time, only
  // far inside the SLO with next to no queueing. This is also how the calm history learns more.
  // Far inside the SLO — or outside it with prefill at its uncontended speed (long prompts that miss
  // the SLO however idle the pool is): either way the load is not what TTFT is made of.
  const insideBy =
    sloMs !== null && mainTtftP95 !== null
      ? (clearlyWithinSloShare(tuning) * sloMs - mainTtftP95) / sloMs
      : null;
  const idleBy = load.contention !== null ? (tuning.usualRatio - load.contention) / tuning.usualRatio : null;
  const farInside = insideBy !== null && insideBy >= 0;
  // Prefill at its uncontended speed means the replicas have spare compute and TTFT is the prompts'
  // own prefill, not load. Inside the SLO but not far, one replica less could still tip it over, so
  // there the probe keeps two replicas: a spare for the replica or peer that fails next.
  const idleSpeed =
    idleBy !== null &&
    idleBy >= 0 &&
    sloMs !== null &&
    mainTtftP95 !== null &&
    (mainTtftP95 > sloMs || replicas - 1 >= 2);
  if (!farInside && !idleSpeed) return null;
  const noQueue =
    isQueueNegligible(main, sloMs, errorBudget(ctx.control)) &&
    isQueueNegligible(pool.fast, sloMs, errorBudget(ctx.control));
  const kvRoom = util.value === null || (util.value * replicas) / (replicas - 1) <= target;
  if (!noQueue || !kvRoom) return null;
  const replay = replayScaleIn(ctx, s, replicas - 1);
  if (!replay) return null;
  const why = farInside
    ? `holds TTFT p95 ${Math.round(mainTtftP95 ?? 0)} ms, under ${Math.round(clearlyWithinSloShare(tuning) * 100)}% of its ${sloMs} ms SLO`
    : `prefills at ${round(load.contention ?? 1, 2)}× its uncontended speed per token — its TTFT p95 of ${Math.round(mainTtftP95 ?? 0)} ms is the prompts' own prefill, not load —`;
  return {
    ...common,
    action: { from: replicas, to: replicas - 1 },
    reason: `Pool ${pool.pool} ${why} with the median request not queueing; its capacity is not known yet, so remove one replica (${replicas} → ${replicas - 1}) and verify.${replay.note}`,
    evidence: [
      ...baseEvidence,
      evidence(`utilization{pool=${pool.pool},basis=${util.basis}}`, util.value, target, fastWindowLabel),
      ...replay.evidence,
    ],
    expectedImpact: {
      summary: `Same goodput on ${pool.pool} with one replica less; TTFT p95 stays under ${sloMs} ms.`,
      ttftP95Ms: { from: mainTtftP95 === null ? null : Math.round(mainTtftP95), to: sloMs },
      ...replayedTtft(replay),
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, replicas - 1) },
    },
    // It rests on TTFT far inside the SLO, or on prefill at its uncontended speed: the surer of the two
    // that holds.
    confidence: confidenceOf(
      anyOf(
        farInside
          ? ratioZ(mainTtftP95 ?? 0, clearlyWithinSloShare(tuning) * (sloMs ?? 0), main.requests, 'below')
          : Number.NaN,
        idleSpeed ? ratioZ(load.contention ?? 1, tuning.usualRatio, main.requests, 'below') : Number.NaN,
      ),
      main.requests,
    ),
  };
}

/**
 * A scale-in the model vouches for: the fewest replicas from `lowest` up that the sizing accepts
 * (replayScaleIn), or null when it accepts none or cannot judge (no outlook). Confidence grows with
 * how far the predicted share of tasks within the SLO clears what the objective requires.
 */
function judgeScaleInByModel(
  ctx: DetectContext,
  s: ScaleInputs,
  lowest: number,
):
  | ({ action: ScaleAction } & Pick<Candidate, 'reason' | 'evidence' | 'expectedImpact' | 'confidence'>)
  | null {
  const { pool, replicas, sloMs } = s;
  if (lowest >= replicas) return null;
  const replay = replayScaleIn(ctx, s, lowest);
  if (!replay?.outlook || !replay.required || replay.to >= replicas) return null;
  const required = replay.required;
  const share = replay.outlook.after.withinSloShare;
  const to = replay.to;
  const what = required.attainableBinds
    ? `no more than what its tasks attain on idle replicas (${Math.round(required.share * 100)}%), which no replica count improves on`
    : `the attainment target (${Math.round(required.share * 100)}%)`;
  return {
    action: { from: replicas, to },
    reason: `Pool ${pool.pool} holds its SLO with room: on ${to} replica${to === 1 ? '' : 's'} its recent requests, replayed at the load expected until the change is verified, keep ${Math.round(share * 100)}% of its tasks within the SLO, and the objective requires ${what} (${replicas} → ${to}).${replay.note}`,
    evidence: replay.evidence,
    expectedImpact: {
      summary: `Same goodput on ${pool.pool} for less money: TTFT p95 stays under ${sloMs} ms.`,
      ...replayedTtft(replay),
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
    },
    // It rests on the prediction reaching the requirement, in the prediction's standard error. Where
    // the requirement is what the tasks attain, the prediction loses none of them: it holds as surely
    // as its sample allows.
    confidence: confidenceOf(
      required.attainableBinds
        ? Number.POSITIVE_INFINITY
        : predictionZ(share, required.share, replay.outlook.after.uncertainty),
      replay.outlook.requests,
    ),
  };
}

/**
 * The pool served nothing because it could not, not for want of traffic: its peers served its model
 * while Governor routes it a share (and its circuit is closed), or — with no routing set by Governor —
 * none of its replicas serve (a region outage, every replica lost). The share comes back to its
 * replicas when they return, so they are not idle.
 */
function couldNotServe(ctx: DetectContext, pool: PoolView): boolean {
  if (!pool.model) return false;
  const peers = ctx.obs.pools.filter((p) => p.pool !== pool.pool && p.model === pool.model);
  if (!peers.some((p) => Math.max(p.fastRatePerS, p.mainRatePerS) > 0)) return false;
  const share = ctx.state.actuated.weights[pool.model]?.[pool.pool];
  if (share !== undefined) return share > 0 && !isCircuitOpen(ctx, pool.pool);
  return isDark(ctx.obs, pool);
}

/**
 * The control window does not show the load the pool carries now or is about to, so no scale-in is
 * judged on it: none of its replicas served within it (lost, dark in an outage — its traffic went
 * around it), a shift gave it a much bigger share since (SHARE_GAIN_RATIO), or traffic recovery is
 * giving it back the share an incident took.
 */
function isLoadUnseen(ctx: DetectContext, pool: PoolView, learning: PoolLearning | undefined): boolean {
  const withinWindow = (atNs: bigint | null | undefined) =>
    atNs != null && Number(ctx.obs.atNs - atNs) / 1e6 < ctx.obs.windowMs;
  if (withinWindow(learning?.darkAtNs) || withinWindow(ctx.state.actuated.gainedNs[pool.pool])) return true;
  return isRecovering(ctx, pool);
}

/** The most replicas one scale-in removes. */
function maxScaleInStep(replicas: number, tuning: ControlTuning): number {
  return Math.max(1, Math.ceil(replicas * tuning.maxScaleInFraction));
}

/**
 * One scale-in per model at a time: the pools serving a model are each other's spare, and each
 * scale-in's replay and verification assume its peers stay as they are. A peer scaled in this tick,
 * or whose scale-in is not verified yet, holds this pool's.
 */
function isPeerScalingIn(ctx: DetectContext, pool: PoolView, planned: ReadonlyMap<string, number>): boolean {
  const verifyNs = secondsToNs(ctx.control.verify_after_s);
  return ctx.obs.pools.some((p) => {
    if (p.pool === pool.pool || p.model !== pool.model) return false;
    const now = p.replicas ?? ctx.state.actuated.replicas[p.pool] ?? null;
    const plannedTo = planned.get(p.pool);
    if (plannedTo !== undefined && now !== null && plannedTo < now) return true;
    const last = readMemory(ctx, 'scale', { pool: p.pool });
    if (last?.direction !== 'decrease') return false;
    // Until it is judged: verification waits for the cooldown too, and for a faulty scope to clear.
    return (
      ctx.obs.atNs - last.appliedNs < verifyNs ||
      ctx.state.open.get(last.recommendationId)?.state === 'applied'
    );
  });
}

/**
 * Too few requests over the window to judge its TTFT or queueing — a pool left with a probe share
 * after a circuit break, say, still holding the replicas it had for its old share — but a load it has
 * carried calmly before needs fewer replicas: size to that load, half the replicas at most at a time.
 */
function judgeSparseScaleIn(ctx: DetectContext, s: ScaleInputs, floor: number): Candidate | null {
  const { tuning, windowLabel } = ctx;
  const { pool, replicas } = s;
  const main = pool.main;
  const calmRate = s.learning?.calmRatePerReplica ?? null;
  if (!main || calmRate === null || calmRate <= 0) return null;
  if ((main.errorRate ?? 0) > errorBudget(ctx.control) || ctx.suspects.has(pool.pool) || isRetryStorming(ctx))
    return null;
  const maxStep = maxScaleInStep(replicas, tuning);
  const to = Math.max(floor, Math.ceil(s.ratePerS / calmRate), replicas - maxStep);
  if (to >= replicas) return null;
  const perReplicaAfter = s.ratePerS / to;
  return {
    kind: 'scale',
    target: { pool: pool.pool },
    action: { from: replicas, to },
    direction: 'decrease',
    reason: `Pool ${pool.pool} served only ${main.requests} request${main.requests === 1 ? '' : 's'} in the last ${windowLabel}, too few to judge its latency, at ${round(s.ratePerS / replicas, 3)} requests/s per replica; it has served ${round(calmRate, 2)} per replica without queueing or contention, so ${to} replica${to === 1 ? '' : 's'} would each carry ${round(perReplicaAfter, 3)} (${replicas} → ${to}).`,
    evidence: [
      evidence(`requests{pool=${pool.pool}}`, main.requests, MIN_P95_SAMPLE, windowLabel),
      evidence(`requestsPerSPerReplicaAfter{pool=${pool.pool}}`, perReplicaAfter, calmRate, windowLabel),
      evidence(`errorRate{pool=${pool.pool}}`, main.errorRate, errorBudget(ctx.control), windowLabel),
    ],
    expectedImpact: {
      summary: `Replicas ${pool.pool} has no load for stop costing money; each one left carries a load it has carried calmly before.`,
      requestsPerSPerReplica: { from: round(s.ratePerS / replicas, 3), to: round(perReplicaAfter, 3) },
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
    },
    confidence: confidenceOf(ratioZ(perReplicaAfter, calmRate, main.requests, 'below'), main.requests),
    scopePools: [pool.pool],
  };
}

/** The replay's TTFT p95 now and after, as an expected impact (nothing without a replay). */
/**
 * The replay's prediction, which verification holds the action to: TTFT p95 and the share of requests
 * within the SLO, now and on the fewer replicas.
 */
function replayedTtft(replay: ReplayedScaleIn): Pick<ExpectedImpact, 'ttftP95Ms' | 'withinSloShare'> {
  if (!replay.outlook) return {};
  const { now, after } = replay.outlook;
  return {
    ttftP95Ms: { from: Math.round(now.ttftP95Ms), to: Math.round(after.ttftP95Ms) },
    withinSloShare: { from: round(now.withinSloShare, 4), to: round(after.withinSloShare, 4) },
  };
}

/** Whether the other pools serving the pool's model hold at least two replicas between them. */
function peersHoldSpare(ctx: DetectContext, pool: PoolView, planned: ReadonlyMap<string, number>): boolean {
  if (pool.model === null) return false;
  let peers = 0;
  let peerReplicas = 0;
  for (const p of ctx.obs.pools) {
    if (p.pool === pool.pool || p.model !== pool.model) continue;
    peers += 1;
    // The latest count Governor set (a scale-in may not show in the gauges yet), or fewer if this
    // tick proposes a scale-in; a proposed scale-up is not capacity until it lands.
    const current = ctx.state.actuated.replicas[p.pool] ?? p.replicas ?? 0;
    peerReplicas += Math.min(current, planned.get(p.pool) ?? current);
  }
  // A model served by this pool alone has no peer to lean on; its floor is the pool's own.
  return peers === 0 || peerReplicas >= 2;
}
