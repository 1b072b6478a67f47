import type { Evidence } from '@governor/conventions';
import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import {
  type DetectContext,
  evidence,
  groupByModel,
  isCircuitOpen,
  isWithinCooldown,
  normalizeWeights,
  readMemory,
  readWeights,
} from './detect-context.ts';
import { planPeerCapacity } from './plan-peer-capacity.ts';
import {
  learnedCapacity,
  minJudgedRequests,
  readEngineSlowdown,
  readLoad,
  readSpeed,
  round,
  scoreConfidence,
  summarizeScope,
} from './pool-signals.ts';

// One pool's errors or latency against its peers serving the same model (packages/control/README.md): the pool is
// faulty, not overloaded, so more replicas of it would not help — take traffic away (shift_traffic)
// and, when it is clearly broken, stop sending it any (circuit_break). Judged on the short window so a
// degraded pool is caught within two control intervals.

export interface PoolAssessment {
  pool: PoolView;
  requests: number;
  errorRate: number | null;
  peerErrorRate: number | null;
  errorOutlier: boolean;
  slowdown: number | null;
  peerSlowdown: number | null;
  /** Load per replica now over the load while the baseline was learned. */
  loadRatio: number | null;
  latencyOutlier: boolean;
  /** Prefill of its fastest requests vs their healthy floor, and the median peer's (1 = as usual). */
  fastestSlowdown: number | null;
  peerFastestSlowdown: number | null;
  /** Slow even at its fastest requests while its peers' run as usual: the GPU, not the load. */
  slowAtFastest: boolean;
  /** Its engines' busy time over what their work took while healthy, and the median peer's (1 = as usual). */
  engineSlowdown: number | null;
  peerEngineSlowdown: number | null;
  /** Its engines take far longer for their work than usual while its peers' do not: the GPU. */
  slowEngine: boolean;
  /** Its engines read normal again after a slowdown: its slow spans are requests from before. */
  engineRecovered: boolean;
}

export function assessPoolAgainstPeers(
  ctx: DetectContext,
  pool: PoolView,
  servingModel: PoolView[],
): PoolAssessment {
  const { tuning } = ctx;
  const minSample = minJudgedRequests(tuning);
  const g = pool.fast;
  const requests = g?.requests ?? 0;
  const peers = servingModel.filter(
    (p) => p.pool !== pool.pool && !isCircuitOpen(ctx, p.pool) && (p.fast?.requests ?? 0) >= minSample,
  );
  const result: PoolAssessment = {
    pool,
    requests,
    errorRate: g?.errorRate ?? null,
    peerErrorRate: null,
    errorOutlier: false,
    slowdown: null,
    peerSlowdown: null,
    loadRatio: null,
    latencyOutlier: false,
    fastestSlowdown: null,
    peerFastestSlowdown: null,
    slowAtFastest: false,
    engineSlowdown: null,
    peerEngineSlowdown: null,
    slowEngine: false,
    engineRecovered: false,
  };
  // The runtime counters show what the engines did in the window itself, with or without requests
  // ending in it: long requests report a slow GPU on their spans only when they end.
  result.engineSlowdown = readEngineSlowdown(ctx.state.learning.get(pool.pool), pool.engineWork, tuning);
  const peerEngine = servingModel
    .filter((p) => p.pool !== pool.pool && !isCircuitOpen(ctx, p.pool))
    .map((p) => readEngineSlowdown(ctx.state.learning.get(p.pool), p.engineWork, tuning))
    .filter((v): v is number => v !== null)
    .sort((a, b) => a - b);
  if (result.engineSlowdown !== null && peerEngine.length > 0) {
    result.peerEngineSlowdown = peerEngine[Math.floor((peerEngine.length - 1) / 2)]!;
    result.slowEngine =
      result.engineSlowdown >= tuning.latencyOutlierRatio &&
      result.peerEngineSlowdown <= tuning.peerNormalRatio &&
      result.engineSlowdown >= tuning.latencyPeerFactor * Math.max(1, result.peerEngineSlowdown);
  }
  if (!g || requests < minSample || peers.length === 0) {
    result.latencyOutlier = result.slowEngine;
    return result;
  }

  result.peerErrorRate = summarizeScope(peers, 'fast').errorRate;
  if (result.errorRate !== null && result.peerErrorRate !== null) {
    const threshold = Math.max(
      tuning.errorOutlierMinRate,
      tuning.errorOutlierPeerFactor * result.peerErrorRate + tuning.errorOutlierPeerMargin,
    );
    result.errorOutlier = result.errorRate >= threshold;
  }

  result.slowdown = readSlowdown(ctx, pool);
  const peerSlowdowns = peers.map((p) => readSlowdown(ctx, p)).filter((v): v is number => v !== null);
  if (peerSlowdowns.length > 0) {
    peerSlowdowns.sort((a, b) => a - b);
    result.peerSlowdown = peerSlowdowns[Math.floor((peerSlowdowns.length - 1) / 2)]!;
    result.loadRatio = readLoadRatio(ctx, pool);
    result.latencyOutlier =
      result.slowdown !== null &&
      result.slowdown >= tuning.latencyOutlierRatio &&
      result.peerSlowdown <= tuning.peerNormalRatio &&
      result.slowdown >= tuning.latencyPeerFactor * Math.max(1, result.peerSlowdown) &&
      (result.loadRatio === null || result.loadRatio <= tuning.latencyMaxLoadRatio);
  }
  // Work-normalized: load and prompt mix change the work, not the time per unit of it.
  if (result.slowEngine) result.latencyOutlier = true;
  // The counters say how the engines run now; spans say how they ran for requests that started up to
  // minutes ago. Once the counters saw a slow GPU recover, slow spans still ending within a control
  // window are its tail, not a new slowdown.
  const slowAt = ctx.state.learning.get(pool.pool)?.engineSlowAtNs ?? null;
  const recovered =
    result.engineSlowdown !== null &&
    !result.slowEngine &&
    slowAt !== null &&
    ctx.obs.atNs - slowAt <= BigInt(ctx.obs.windowMs) * 1_000_000n;
  result.engineRecovered = recovered;
  if (recovered) result.latencyOutlier = false;
  // Load slows the typical request; a slow GPU slows even the fastest ones. A burst on every pool
  // hides a slow one among them, but not from this.
  result.fastestSlowdown = readFastestSlowdown(ctx, pool);
  const peerFastest = peers.map((p) => readFastestSlowdown(ctx, p)).filter((v): v is number => v !== null);
  if (result.fastestSlowdown !== null && peerFastest.length > 0) {
    peerFastest.sort((a, b) => a - b);
    result.peerFastestSlowdown = peerFastest[Math.floor((peerFastest.length - 1) / 2)]!;
    result.slowAtFastest =
      result.fastestSlowdown >= tuning.latencyOutlierRatio &&
      result.peerFastestSlowdown <= tuning.peerNormalRatio &&
      result.fastestSlowdown >= tuning.latencyPeerFactor * Math.max(1, result.peerFastestSlowdown) &&
      !recovered;
  }
  return result;
}

/** Prefill ms per token of the pool's fastest requests over their healthy floor; null until learned. */
function readFastestSlowdown(ctx: DetectContext, pool: PoolView): number | null {
  const learning = ctx.state.learning.get(pool.pool);
  const floor = learning?.fastestPrefillFloorMsPerToken;
  const now = pool.fastestPrefillMsPerToken;
  if (!learning || learning.healthySamples < ctx.tuning.minBaselineSamples) return null;
  if (!floor || floor <= 0 || now === null) return null;
  return now / floor;
}

/** How much slower than usual the pool works: by its engines' counters when they show it, else its requests. */
function readSlowness(a: PoolAssessment): number {
  if (a.slowEngine) return a.engineSlowdown ?? 1;
  return a.engineRecovered ? 1 : (a.slowdown ?? 1);
}

/** Engine time now over the pool's own healthy baseline (1 = as usual); null without a trusted baseline. */
export function readSlowdown(ctx: DetectContext, pool: PoolView): number | null {
  const learning = ctx.state.learning.get(pool.pool);
  const baseline = learning?.speedBaseline;
  const now = readSpeed(pool);
  if (!learning || learning.healthySamples < ctx.tuning.minBaselineSamples) return null;
  if (!baseline || baseline <= 0 || now === null || (pool.fast?.requests ?? 0) < 5) return null;
  return now / baseline;
}

/** Requests/s per serving replica now over what it was while the baseline was learned. */
function readLoadRatio(ctx: DetectContext, pool: PoolView): number | null {
  const base = ctx.state.learning.get(pool.pool)?.loadBaselinePerReplicaPerS;
  const serving = pool.readyReplicas ?? pool.replicas;
  if (!base || base <= 0 || !serving) return null;
  return pool.fastRatePerS / serving / base;
}

export function detectPoolOutliers(ctx: DetectContext): Candidate[] {
  const out: Candidate[] = [];
  const { tuning } = ctx;
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    if (pools.length < 2) continue;
    const assessed = pools.map((p) => assessPoolAgainstPeers(ctx, p, pools));
    const outliers = assessed.filter((a) => a.errorOutlier || a.latencyOutlier);
    for (const a of outliers) ctx.suspects.add(a.pool.pool);
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
    const ev = [...describeEvidence(ctx, worst), evidence(`outlierStreak{pool=${pool}}`, streak, 2, 'ticks')];
    const what = describe(worst);
    const margin =
      Math.max(
        worst.errorOutlier ? errorRate / Math.max(tuning.circuitBreakErrorRate, 1e-9) - 0.3 : 0,
        worst.latencyOutlier ? (slowdown - tuning.latencyOutlierRatio) / tuning.latencyOutlierRatio + 0.3 : 0,
      ) + (streak >= 2 ? 0.3 : 0);
    // A slowdown seen once may be noise; errors are evidence on their own.
    // One tick of it may be a transient (a burst of in-flight requests lost with a crashed replica):
    // proposed at once — that is the detection — but only confident once it persists, unless the
    // pool is plainly broken.
    const confidence = Math.min(
      streak >= 2 || errorRate >= tuning.circuitBreakErrorRate ? 1 : tuning.firstSightConfidence,
      scoreConfidence(margin, worst.requests, tuning.minRequests),
    );
    const scopePools = pools.map((p) => p.pool);
    const modelScope = summarizeScope(pools, 'fast');

    if (broken && !peersFull && !isCircuitOpen(ctx, pool)) {
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
        },
        confidence,
        scopePools,
        urgent: true,
      });
    }

    const keep =
      broken && !peersFull
        ? 0
        : capacityShare !== null
          ? Math.min(capacityShare, 0.9)
          : peersStuck
            ? 0.5
            : Math.min(
                worst.latencyOutlier ? Math.max(0.2, Math.min(0.7, 1 / slowdown)) : 0.7,
                worst.errorOutlier ? Math.max(0, Math.min(0.7, 1 - 5 * errorRate)) : 0.7,
              );
    const current = weights[pool] ?? 0;
    // Peers that cannot grow now carry no more than their kept replicas do: a pool that lost
    // replicas keeps at least its own part of the model's ready capacity.
    const ownPart =
      capacityShare !== null && peersStuck && !(broken && !peersFull)
        ? readyCapacityPart(ctx, worst.pool, peers, errorRate)
        : null;
    const target = round(ownPart === null ? current * keep : Math.max(current * keep, ownPart), 3);
    if (current - target < 0.02) continue;
    const moved = current - target;
    const shifted = moveShare(weights, pool, target, peers);
    // A pool that still serves most of its requests (not broken) keeps them until its peers can carry
    // what would move: on peers without that room they would queue instead — a few errors become
    // many timeouts — and the peers' new replicas take minutes to start.
    const modelRate = pools.reduce((sum, p) => sum + Math.max(p.fastRatePerS, p.mainRatePerS), 0);
    const noRoom =
      !peersFull && !broken && peersLackRoom(ctx, peers, moved * modelRate, capacityShare === null);
    const waits = peersFull || noRoom;
    const why = peersFull
      ? ' once they have room: they are load-bound themselves, so this waits for a human or for their new capacity'
      : noRoom
        ? ' once they have room: at their learned capacity they cannot carry it now, so this waits for a human or for their new capacity'
        : '';
    out.push({
      kind: 'shift_traffic',
      target: { model, pool },
      action: { weights: shifted },
      direction: 'decrease',
      reason: `Pool ${pool} is an outlier among the pools serving ${model} (${what}); move ${Math.round(moved * 100)}% of ${model}'s traffic to ${peers.map((p) => p.pool).join(', ')}${why}.`,
      evidence: ev,
      expectedImpact: {
        summary: `Fewer ${model} requests land on the faulty pool; goodput of ${model} recovers toward its peers'.`,
        weight: { pool, from: round(current), to: target },
        errorRate: { from: round(modelScope.errorRate ?? 0), to: round(worst.peerErrorRate ?? 0) },
      },
      confidence: waits ? Math.min(confidence, tuning.unprofitableConfidence) : confidence,
      scopePools,
      urgent: true,
      cause: 'incident',
    });
    if (peersFull) continue;
    // Without room the peers' scale-ups go with the proposed shift, for the same human to approve.
    for (const c of planPeerCapacity(ctx, model, pools, weights, shifted, pool))
      out.push({
        ...c,
        confidence: noRoom ? Math.min(confidence, tuning.unprofitableConfidence) : confidence,
      });
  }
  return out;
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
  if (current - target < 0.02) return null;
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
    },
    confidence: Math.min(
      tuning.unprofitableConfidence,
      scoreConfidence(
        (factor - tuning.latencyOutlierRatio) / tuning.latencyOutlierRatio + 0.3,
        worst.requests,
        tuning.minRequests,
      ),
    ),
    scopePools: pools.map((p) => p.pool),
    cause: 'incident',
  };
}

/**
 * The peers cannot carry `movedRatePerS` more now: their spare requests/s at the target utilization of
 * the capacity they showed while saturated (serving replicas) add up to less — the cautious estimate,
 * as for a scale-in: load moved onto them that they cannot carry breaks their SLO until it is rolled
 * back. A peer whose scale-in is still inside its cooldown cannot grow before it ends (that would be
 * a reversal): it counts only the replicas it kept and, without a learned capacity and with
 * `calmBound`, the load per replica it has carried calmly. (Not for a pool that lost replicas: its
 * survivors' errors are retried by clients and multiply where they stay, so its share moves.) False
 * while any other peer's capacity is unknown.
 */
function peersLackRoom(
  ctx: DetectContext,
  peers: readonly PoolView[],
  movedRatePerS: number,
  calmBound: boolean,
): boolean {
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
    if (!perReplica || replicas <= 0) return false;
    spare += Math.max(0, replicas * perReplica - rate);
  }
  return spare < movedRatePerS;
}

/**
 * The pool's part of its model's ready capacity that serves requests: its ready replicas, less the
 * share of requests it fails, and each peer's ready replicas (no more than a scale-in inside its
 * cooldown kept), each at its capacity per replica — learned while saturated, else the most it
 * served calmly (a lower bound). Null while one is not known.
 */
function readyCapacityPart(
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
function keptByScaleIn(ctx: DetectContext, pool: PoolView): number | null {
  const last = readMemory(ctx, 'scale', { pool: pool.pool });
  return isWithinCooldown(ctx, last) && last.direction === 'decrease'
    ? (last.expectReplicas ?? pool.replicas ?? 0)
    : null;
}

/** Weights with `pool` down to `target`, the rest spread over `peers` in proportion to their weights. */
function moveShare(
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

/** The signals a pool was judged on against its peers, as recommendation evidence. */
function describeEvidence(ctx: DetectContext, a: PoolAssessment): Evidence[] {
  const { tuning, fastWindowLabel: w } = ctx;
  const pool = a.pool.pool;
  return [
    evidence(`errorRate{pool=${pool}}`, a.errorRate, tuning.errorOutlierMinRate, w),
    evidence(`errorRate{peers of ${pool}}`, a.peerErrorRate, null, w),
    evidence(`engineTimeVsBaseline{pool=${pool}}`, a.slowdown, tuning.latencyOutlierRatio, w),
    evidence(`engineTimeVsBaseline{peers of ${pool}}`, a.peerSlowdown, tuning.peerNormalRatio, w),
    evidence(`fastestPrefillVsFloor{pool=${pool}}`, a.fastestSlowdown, tuning.latencyOutlierRatio, w),
    evidence(`fastestPrefillVsFloor{peers of ${pool}}`, a.peerFastestSlowdown, tuning.peerNormalRatio, w),
    evidence(`engineBusyVsWork{pool=${pool}}`, a.engineSlowdown, tuning.latencyOutlierRatio, w),
    evidence(`engineBusyVsWork{peers of ${pool}}`, a.peerEngineSlowdown, tuning.peerNormalRatio, w),
    evidence(`loadPerReplicaVsBaseline{pool=${pool}}`, a.loadRatio, tuning.latencyMaxLoadRatio, w),
    evidence(`requests{pool=${pool}}`, a.requests, tuning.minRequests, w),
  ];
}

function severity(a: PoolAssessment): number {
  return (a.errorOutlier ? (a.errorRate ?? 0) * 10 : 0) + (a.latencyOutlier ? readSlowness(a) : 0);
}

function describe(a: PoolAssessment): string {
  const parts: string[] = [];
  if (a.errorOutlier) {
    parts.push(`error rate ${pct(a.errorRate)} vs ${pct(a.peerErrorRate)} on its peers`);
  }
  if (a.slowEngine) {
    parts.push(
      `its engines take ${round(a.engineSlowdown ?? 0, 1)}× their usual time for the work they do while its peers' take ${round(a.peerEngineSlowdown ?? 1, 1)}×`,
    );
  } else if (a.latencyOutlier) {
    parts.push(
      `requests take ${round(a.slowdown ?? 0, 1)}× their usual engine time while peers run at ${round(a.peerSlowdown ?? 1, 1)}×`,
    );
  }
  return parts.join('; ');
}

function pct(v: number | null): string {
  return v === null ? 'n/a' : `${round(v * 100, 1)}%`;
}
