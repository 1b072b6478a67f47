import type { Candidate, PoolLearning } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import {
  type DetectContext,
  evidence,
  isCircuitOpen,
  isRecovering,
  isWithinCooldown,
  readMemory,
} from './detect-context.ts';
import { isRetryStorming } from './detect-retry-budget.ts';
import type { ControlTuning } from '../engine/control-tuning.ts';
import { secondsToNs } from '../time.ts';
import { type ReplayOutlook, replayAtReplicas } from './replay-prefill-queue.ts';
import {
  type LoadReading,
  type Utilization,
  estimateUtilization,
  isDark,
  isFailing,
  isQueueNegligible,
  minJudgedRequests,
  readLoad,
  readQueueShare,
  readUncontendedMsPerToken,
  round,
  scoreConfidence,
} from './pool-signals.ts';

// Load-bound TTFT → more replicas; spare capacity that N−1 replicas can carry within the SLO →
// fewer. The objective is cost per successful task under the SLO: a replica that holds no SLO up
// is pure cost, a queue that breaks the SLO turns paid work into failed tasks. A scale-up that
// would buy fewer tasks within the SLO than it costs is only proposed, for a human to weigh.

export interface ScaleReadiness {
  settled: boolean;
  why: string;
}

/** Whether the pool's last scale action has taken effect (new replicas serving, or time passed). */
export function readScaleReadiness(ctx: DetectContext, pool: PoolView): ScaleReadiness {
  const memory = readMemory(ctx, 'scale', { pool: pool.pool });
  if (!memory) return { settled: true, why: 'no earlier scale action' };
  const elapsedS = Number(ctx.obs.atNs - memory.appliedNs) / 1e9;
  const freshWindowS = ctx.obs.fastWindowMs / 1000;
  if (elapsedS < freshWindowS)
    return { settled: false, why: `scaled ${Math.round(elapsedS)} s ago; signals not yet fresh` };
  if (memory.direction === 'increase' && memory.expectReplicas !== null) {
    if (pool.readyReplicas !== null && pool.readyReplicas >= memory.expectReplicas) {
      // The new replicas are serving, but first they drain the backlog that built while they
      // started: judge the pool again after one short window for that and one that shows them
      // carrying the steady load.
      const readyForS = memory.readyNs === undefined ? 0 : Number(ctx.obs.atNs - memory.readyNs) / 1e9;
      if (readyForS < 2 * freshWindowS && elapsedS < ctx.control.settle_timeout_s) {
        return {
          settled: false,
          why: `${pool.readyReplicas} of ${memory.expectReplicas} replicas ready for ${Math.round(readyForS)} s; signals not yet fresh`,
        };
      }
      return { settled: true, why: `${pool.readyReplicas} of ${memory.expectReplicas} replicas ready` };
    }
    const limitS = pool.readyReplicas === null ? ctx.control.cooldown_s : ctx.control.settle_timeout_s;
    if (elapsedS < limitS) {
      return {
        settled: false,
        why:
          pool.readyReplicas === null
            ? `scale-up ${Math.round(elapsedS)} s ago; waiting ${limitS} s for cold starts`
            : `${pool.readyReplicas} of ${memory.expectReplicas} replicas ready ${Math.round(elapsedS)} s after the scale-up`,
      };
    }
  }
  return { settled: true, why: `last scale ${Math.round(elapsedS)} s ago` };
}

export function detectScale(ctx: DetectContext): Candidate[] {
  const out: Candidate[] = [];
  // Replica counts proposed this tick, so two peers are not both scaled in against each other.
  const planned = new Map<string, number>();
  for (const pool of ctx.obs.pools) {
    const candidate = judgePool(ctx, pool, planned);
    if (!candidate) continue;
    out.push(candidate);
    if (typeof candidate.action.to === 'number') planned.set(pool.pool, candidate.action.to);
  }
  return out;
}

function judgePool(
  ctx: DetectContext,
  pool: PoolView,
  planned: ReadonlyMap<string, number>,
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
    util: estimateUtilization(pool, ratePerS, replicas, learning, tuning),
    load: readLoad(pool, learning, tuning),
    sloMs: slo.ttft_ms ?? null,
    costPerReplicaHour: pool.gpuHourUsd === null ? null : pool.gpuHourUsd * pool.gpusPerReplica,
    failing: isFailing(pool.fast?.errorRate ?? null, pool.fast?.requests ?? 0, tuning),
  };
  return (
    judgeScaleUp(ctx, s) ??
    (draining === null ? judgeScaleIn(ctx, s, control.target_utilization, planned) : null)
  );
}

/** The count Governor's last scale-in asked for, while the pool still pays for more (draining). */
function drainingTo(ctx: DetectContext, pool: PoolView): number | null {
  const memory = readMemory(ctx, 'scale', { pool: pool.pool });
  if (memory?.direction !== 'decrease' || memory.expectReplicas === null || pool.replicas === null)
    return null;
  const elapsedS = Number(ctx.obs.atNs - memory.appliedNs) / 1e9;
  return pool.replicas > memory.expectReplicas && elapsedS < ctx.control.settle_timeout_s
    ? memory.expectReplicas
    : null;
}

interface ScaleInputs {
  pool: PoolView;
  replicas: number;
  ratePerS: number;
  floor: number;
  ceiling: number;
  learning: PoolLearning | undefined;
  util: Utilization;
  load: LoadReading;
  sloMs: number | null;
  costPerReplicaHour: number | null;
  /** Its requests fail (isFailing, short window): its latency is errors and retries as much as load. */
  failing: boolean;
}

function hourlyCost(s: ScaleInputs, n: number): number | null {
  return s.costPerReplicaHour === null ? null : round(n * s.costPerReplicaHour, 2);
}

function judgeScaleUp(ctx: DetectContext, s: ScaleInputs): Candidate | null {
  const { tuning, control, fastWindowLabel } = ctx;
  const { pool, replicas, util, load, sloMs } = s;
  const fast = pool.fast;
  const ttftP95 = fast?.ttftMs.p95 ?? null;
  const enoughSample = (fast?.requests ?? 0) >= minJudgedRequests(tuning);
  const faulty =
    ctx.suspects.has(pool.pool) ||
    isCircuitOpen(ctx, pool.pool) ||
    ctx.handled.has(pool.pool) ||
    isFreshlyShiftedAway(ctx, pool);
  const sloPressure = sloMs !== null && ttftP95 !== null ? ttftP95 / sloMs : null;
  const breach = sloPressure !== null ? sloPressure > 0.9 : load.loadBound;
  const hot = util.value !== null && util.value >= tuning.highUtilization;
  if (faulty || !enoughSample || !((load.loadBound && breach) || hot) || replicas >= s.ceiling) return null;

  // With a known capacity, size for the target utilization. Without one, grow with the pressure:
  // how far TTFT is past the SLO or prefill is slowed by contention, between 1.25× and 2× per step
  // (a cold start takes minutes; a pool that overshoots is scaled back in after the cooldown).
  const pressure = Math.max(sloPressure ?? 1, load.contention ?? 1);
  // A known capacity is in requests, learned on the prompts of its day: a pool whose TTFT is
  // load-bound past the SLO at a rate that capacity says it carries is serving heavier requests now,
  // and grows with the pressure as when its capacity is unknown. Not a failing pool: its latency is
  // errors and their retries as much as load.
  const byPressure = Math.ceil(replicas * Math.min(2, Math.max(1.25, pressure)));
  const sized =
    util.value !== null && util.capacityKnown
      ? Math.max(
          Math.ceil((replicas * util.value) / control.target_utilization),
          load.loadBound && breach && !s.failing ? byPressure : 0,
        )
      : byPressure;
  const to = Math.min(s.ceiling, Math.max(replicas + 1, sized));
  const worth = weighScaleUp(ctx, s, to);
  const why =
    load.loadBound && breach
      ? `TTFT p95 ${Math.round(ttftP95 ?? 0)} ms${sloMs ? ` against a ${sloMs} ms SLO` : ''} is load-bound (${Math.round((load.queueShare ?? 0) * 100)}% of it queueing${load.contention !== null && load.contention >= 1.5 ? `, prefill ${round(load.contention, 1)}× slower per token than when uncontended` : ''})`
      : `utilization ${round(util.value ?? 0, 2)} (${util.basis}) is above ${tuning.highUtilization}`;
  const margin = Math.max(
    sloPressure !== null ? sloPressure - 0.9 : 0,
    util.value !== null ? (util.value - tuning.highUtilization) / (1 - tuning.highUtilization) : 0,
    load.queueShare !== null ? load.queueShare - tuning.queueBoundShare : 0,
    load.contention !== null ? (load.contention - tuning.contentionRatio) / tuning.contentionRatio : 0,
  );
  const confidence = scoreConfidence(margin, fast?.requests ?? 0, tuning.minRequests);
  return {
    kind: 'scale',
    target: { pool: pool.pool },
    action: { from: replicas, to },
    direction: 'increase',
    reason: `Pool ${pool.pool}: ${why}; add ${to - replicas} replica${to - replicas === 1 ? '' : 's'} (${replicas} → ${to})${worth.note}.`,
    evidence: [
      evidence(`ttftMs.p95{pool=${pool.pool}}`, ttftP95, sloMs, fastWindowLabel),
      evidence(
        `queueShareOfTtft{pool=${pool.pool}}`,
        load.queueShare,
        tuning.queueBoundShare,
        fastWindowLabel,
      ),
      evidence(
        `prefillMsPerTokenVsFloor{pool=${pool.pool}}`,
        load.contention,
        tuning.contentionRatio,
        fastWindowLabel,
      ),
      evidence(
        `utilization{pool=${pool.pool},basis=${util.basis}}`,
        util.value,
        tuning.highUtilization,
        fastWindowLabel,
      ),
      evidence(`requestsPerS{pool=${pool.pool}}`, s.ratePerS, null, fastWindowLabel),
      evidence(
        `replicas{pool=${pool.pool}}`,
        replicas,
        s.ceiling === Number.POSITIVE_INFINITY ? null : s.ceiling,
        'now',
      ),
      ...worth.evidence,
    ],
    expectedImpact: {
      summary: `Queueing on ${pool.pool} drains once the new replicas are warm; TTFT p95 back under ${sloMs ?? 'its usual'} ms.`,
      ttftP95Ms: { from: ttftP95 === null ? null : Math.round(ttftP95), to: sloMs },
      utilization: {
        from: util.value === null ? null : round(util.value, 2),
        to: util.value === null ? null : round((util.value * replicas) / to, 2),
      },
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
    },
    // Not worth its cost under the objective: a human decides (below any sensible min_confidence).
    confidence: worth.beneficial ? confidence : Math.min(confidence, tuning.unprofitableConfidence),
    scopePools: [pool.pool],
  };
}

/**
 * Does the scale-up lower the fleet's cost per task within the SLO? The tasks it can win back are
 * the pool's out-of-SLO share in proportion to how much of TTFT is load (queueing, contention);
 * they must be worth at least the added replica-hours at the fleet's current cost per good task.
 * A failing pool is weighed the same way: its timeouts from queueing are among the out-of-SLO share
 * that load explains and are won back; failures that come with prompts too long for the SLO even
 * when calm are not (the same ceiling as below), and more replicas would only fail them at a higher
 * cost.
 */
function weighScaleUp(
  ctx: DetectContext,
  s: ScaleInputs,
  to: number,
): { beneficial: boolean; note: string; evidence: ReturnType<typeof evidence>[] } {
  const main = s.pool.main;
  const fast = s.pool.fast;
  const fleet = readFleetGoodRate(ctx);
  if (fleet === null) return { beneficial: true, note: '', evidence: [] };
  const { goodPerS, costPerHour } = fleet;
  // The pool's goodput as it is now (short window, when it holds enough requests), so a sudden
  // overload counts; its rate over the control window, as the fleet's (readFleetGoodRate).
  const recent = fast !== null && fast.requests >= ctx.tuning.minRequests && fast.goodput !== null;
  const goodput = recent ? fast.goodput : (main?.goodput ?? null);
  const ratePerS = s.pool.mainRatePerS;
  if (goodput === null || s.costPerReplicaHour === null || costPerHour <= 0 || goodPerS <= 0) {
    return { beneficial: true, note: '', evidence: [] };
  }
  const loadShare = Math.max(s.load.queueShare ?? 0, s.load.contention ? 1 - 1 / s.load.contention : 0);
  // No more than the pool reached when calm, nor than the share of its prompts that prefill within
  // the SLO at its uncontended speed: long prompts that miss the SLO on an idle replica are not won
  // back by more replicas (a pool never calm since Governor started has only the second).
  const reachable = readReachableShare(ctx, s);
  const ceiling = Math.min(s.learning?.calmGoodput ?? 1, reachable ?? 1);
  const gainPerS =
    Math.min((1 - goodput) * Math.min(1, loadShare), Math.max(0, ceiling - goodput)) * ratePerS;
  const before = (goodPerS * 3600) / costPerHour;
  const after = ((goodPerS + gainPerS) * 3600) / (costPerHour + (to - s.replicas) * s.costPerReplicaHour);
  const beneficial = after >= before;
  return {
    beneficial,
    note: beneficial
      ? ''
      : `; it would buy fewer tasks within the SLO than it costs (tasks within the SLO per dollar ${round(before, 1)} → ${round(after, 1)}), so it waits for a human`,
    evidence: [
      evidence('tasksWithinSloPerUsd', before, null, ctx.windowLabel),
      evidence('tasksWithinSloPerUsdAfter', after, before, ctx.windowLabel),
      evidence(
        `goodput{pool=${s.pool.pool}}`,
        goodput,
        s.learning?.calmGoodput ?? null,
        recent ? ctx.fastWindowLabel : ctx.windowLabel,
      ),
      evidence(`promptsPrefillingWithinSlo{pool=${s.pool.pool}}`, reachable, null, ctx.windowLabel),
    ],
  };
}

/**
 * The share of the pool's recent requests whose uncached prompt prefills within the SLO at the
 * pool's uncontended speed: the most of them any number of replicas brings within it. Null without
 * an SLO, that speed (learned over a few healthy ticks) or enough requests.
 */
function readReachableShare(ctx: DetectContext, s: ScaleInputs): number | null {
  const msPerToken = readUncontendedMsPerToken(s.learning, ctx.tuning);
  const arrivals = s.pool.arrivals;
  if (s.sloMs === null || msPerToken === null || arrivals.length < ctx.tuning.minRequests) return null;
  let within = 0;
  for (const a of arrivals) if (a.uncachedTokens * msPerToken <= s.sloMs) within += 1;
  return within / arrivals.length;
}

/**
 * The fleet's tasks within the SLO per second over the control window, and what it costs per hour
 * now; null when a pool has no price: the price of a task within the SLO that a scale-up's gain must
 * match. Over the window rather than as it is now: a fleet-wide incident failing most tasks now
 * would make any replica look cheap (over the window it weighs only as long as it has lasted). In the
 * control window's rates, as the scaled pool's gain is read: the short window's completions come in
 * bursts (a backlog draining as replicas start), and rates read over two windows tip the comparison
 * (a control window that the data does not fill yet reads low, and as Governor started every
 * scale-up looked worth its cost).
 */
function readFleetGoodRate(ctx: DetectContext): { goodPerS: number; costPerHour: number } | null {
  let goodPerS = 0;
  let costPerHour = 0;
  for (const p of ctx.obs.pools) {
    if (p.gpuHourUsd === null) return null;
    costPerHour += (p.replicas ?? 0) * p.gpusPerReplica * p.gpuHourUsd;
    if (p.main?.goodput != null) goodPerS += p.main.goodput * p.mainRatePerS;
  }
  return { goodPerS, costPerHour };
}

/** A scale-in's replica count once its recent requests were replayed there, and what the replay saw. */
interface ReplayedScaleIn {
  to: number;
  outlook: ReplayOutlook | null;
  note: string;
  evidence: ReturnType<typeof evidence>[];
}

/**
 * Checks a scale-in to `to` replicas by replaying the pool's recent requests there (see
 * replay-prefill-queue.ts): mean load says N−1 replicas carry the work; only the requests themselves
 * say whether their prompts then queue behind each other past the SLO. The fewest replicas from `to`
 * up on which the replay pushes next to no more requests past the SLO (replayLossTolerance, and
 * never less than one request) is kept; none, no scale-in. Without an SLO, enough requests or the
 * pool's uncontended prefill speed, `to` stands unchecked.
 */
function replayScaleIn(ctx: DetectContext, s: ScaleInputs, to: number): ReplayedScaleIn | null {
  const { tuning } = ctx;
  const unchecked = { to, outlook: null, note: '', evidence: [] };
  const msPerToken = readUncontendedMsPerToken(s.learning, ctx.tuning);
  const sloMs = s.sloMs;
  if (sloMs === null || msPerToken === null || s.pool.arrivals.length < tuning.minRequests) return unchecked;
  // Waits only grow as replicas go: the fewest replicas that hold the SLO are found by bisection.
  const holds = (n: number): ReplayOutlook | null => {
    const outlook = replayAtReplicas(s.pool.arrivals, {
      nowReplicas: s.replicas,
      afterReplicas: n,
      msPerToken,
      sloMs,
    });
    if (outlook === null) return null;
    // A sample of a few dozen requests cannot tell a loss of one request from none.
    const lostRequests = (outlook.now.withinSloShare - outlook.after.withinSloShare) * outlook.requests;
    return lostRequests <= Math.max(1, tuning.replayLossTolerance * outlook.requests) + 1e-9 ? outlook : null;
  };
  let found: { n: number; outlook: ReplayOutlook } | null = null;
  for (let lo = to, hi = s.replicas - 1; lo <= hi; ) {
    const mid = Math.floor((lo + hi) / 2);
    const outlook = holds(mid);
    if (outlook) {
      found = { n: mid, outlook };
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  if (found) {
    const { n, outlook } = found;
    return {
      to: n,
      outlook,
      note: ` Its last ${outlook.requests} requests replayed on ${n} replica${n === 1 ? '' : 's'}: TTFT p95 ${Math.round(outlook.now.ttftP95Ms)} → ${Math.round(outlook.after.ttftP95Ms)} ms, ${Math.round(outlook.now.withinSloShare * 100)}% → ${Math.round(outlook.after.withinSloShare * 100)}% within the SLO.`,
      evidence: [
        evidence(
          `replayedTtftP95Ms{pool=${s.pool.pool},replicas=${n}}`,
          outlook.after.ttftP95Ms,
          sloMs,
          ctx.windowLabel,
        ),
        evidence(
          `replayedWithinSloShare{pool=${s.pool.pool},replicas=${n}}`,
          outlook.after.withinSloShare,
          outlook.now.withinSloShare,
          ctx.windowLabel,
        ),
      ],
    };
  }
  return null;
}

function judgeScaleIn(
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
  // Evidence for N−1 (or for silence) needs a whole control window of watching.
  const watchedMs = ctx.state.firstTickNs === null ? 0 : Number(ctx.obs.atNs - ctx.state.firstTickNs) / 1e6;
  if (watchedMs < ctx.obs.windowMs) return null;
  if (s.ratePerS <= 0) {
    if (couldNotServe(ctx, pool)) return null;
    return {
      kind: 'scale',
      target: { pool: pool.pool },
      action: { from: replicas, to: floor },
      direction: 'decrease',
      reason: `Pool ${pool.pool} served no requests in the last ${windowLabel}; keep ${floor} replica${floor === 1 ? '' : 's'} (${replicas} → ${floor}).`,
      evidence: [
        evidence(`requests{pool=${pool.pool}}`, 0, 0, windowLabel),
        evidence(`replicas{pool=${pool.pool}}`, replicas, floor, 'now'),
      ],
      expectedImpact: {
        summary: `Idle replicas stop costing money; nothing is served by ${pool.pool} now.`,
        costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, floor) },
      },
      confidence: scoreConfidence(0.6, tuning.minRequests * 4, tuning.minRequests),
      scopePools: [pool.pool],
    };
  }
  if (isLoadUnseen(ctx, pool, s.learning)) return null;
  const main = pool.main;
  if (!main) return null;
  if (isPeerScalingIn(ctx, pool, planned)) return null;
  if (main.requests < tuning.minRequests) return judgeSparseScaleIn(ctx, s, floor);
  const mainTtftP95 = main.ttftMs.p95;
  const mainQueueShare = readQueueShare(main);
  // Scale-in changes load, not a prompt's own prefill time: what matters is that the pool is calm
  // (no queueing, prefill at its uncontended speed, no failures). Whether it then still holds the SLO
  // as well as before is what verification checks, rolling back if not.
  const calm =
    (load.queueShare ?? 0) < tuning.queueBoundShare / 2 &&
    (mainQueueShare ?? 0) < tuning.queueBoundShare / 2 &&
    (load.contention ?? 1) < 1.5 &&
    (main.errorRate ?? 0) <= 0.05 &&
    !ctx.suspects.has(pool.pool);
  // Nor during a retry storm: it multiplies every pool's requests, which the pool's own calm does not
  // show yet. (A failing peer's traffic is planned for by the shift that moves it.)
  if (!calm || isRetryStorming(ctx)) return null;
  const maxStep = maxScaleInStep(replicas, tuning);
  const common = {
    kind: 'scale' as const,
    target: { pool: pool.pool },
    direction: 'decrease' as const,
    scopePools: [pool.pool],
  };
  const baseEvidence = [
    evidence(`ttftMs.p95{pool=${pool.pool}}`, mainTtftP95, sloMs, windowLabel),
    evidence(`queueShareOfTtft{pool=${pool.pool}}`, mainQueueShare, tuning.queueBoundShare / 2, windowLabel),
    evidence(`requestsPerS{pool=${pool.pool}}`, s.ratePerS, null, windowLabel),
  ];

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
      confidence: scoreConfidence(
        (target - utilAtMinusOne) / target + (util.basis === 'learned_capacity' ? 0.2 : 0),
        main.requests,
        tuning.minRequests,
      ),
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
          evidence(`prefillMsPerTokenVsFloor{pool=${pool.pool}}`, load.contention, 1.5, fastWindowLabel),
          ...replay.evidence,
        ],
        expectedImpact: {
          summary: `Same goodput on ${pool.pool} for less money: each replica carries a load it has carried calmly before.`,
          ...replayedTtft(replay),
          requestsPerSPerReplica: { from: round(s.ratePerS / replicas, 2), to: round(perReplicaAfter, 2) },
          costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
        },
        confidence: scoreConfidence(
          (calmRate - perReplicaAfter) / calmRate + 0.2,
          main.requests,
          tuning.minRequests,
        ),
      };
    }
  }

  // (c) Nothing known yet — or the calm history allows no fewer replicas: one replica at a time, only
  // far inside the SLO with next to no queueing. This is also how the calm history learns more.
  // Far inside the SLO — or outside it with prefill at its uncontended speed (long prompts that miss
  // the SLO however idle the pool is): either way the load is not what TTFT is made of.
  const insideBy =
    sloMs !== null && mainTtftP95 !== null ? (tuning.probeMaxSloShare * sloMs - mainTtftP95) / sloMs : null;
  const idleBy =
    load.contention !== null
      ? (tuning.probeMaxContention - load.contention) / tuning.probeMaxContention
      : null;
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
    isQueueNegligible(main, sloMs, tuning.probeMaxQueueSloShare) &&
    isQueueNegligible(pool.fast, sloMs, tuning.probeMaxQueueSloShare);
  const kvRoom = util.value === null || (util.value * replicas) / (replicas - 1) <= target;
  if (!noQueue || !kvRoom) return null;
  const replay = replayScaleIn(ctx, s, replicas - 1);
  if (!replay) return null;
  const why = farInside
    ? `holds TTFT p95 ${Math.round(mainTtftP95 ?? 0)} ms, under ${Math.round(tuning.probeMaxSloShare * 100)}% of its ${sloMs} ms SLO`
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
    confidence: scoreConfidence(
      Math.max(insideBy ?? 0, idleBy ?? 0) * 2 + 0.2,
      main.requests,
      tuning.minRequests,
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

/**
 * Traffic was moved off the pool for an incident within the cooldown: its load went to peers sized
 * for it, and more replicas of the pool that just failed are not what its model needs. (After the
 * cooldown the pool is judged as any other, so one left short while recovery gives traffic back
 * grows again.)
 */
function isFreshlyShiftedAway(ctx: DetectContext, pool: PoolView): boolean {
  if (!pool.model || !isRecovering(ctx, pool)) return false;
  return isWithinCooldown(ctx, readMemory(ctx, 'shift_traffic', { model: pool.model, pool: pool.pool }));
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
    return last?.direction === 'decrease' && ctx.obs.atNs - last.appliedNs < verifyNs;
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
  if ((main.errorRate ?? 0) > 0.05 || ctx.suspects.has(pool.pool) || isRetryStorming(ctx)) return null;
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
      evidence(`requests{pool=${pool.pool}}`, main.requests, tuning.minRequests, windowLabel),
      evidence(`requestsPerSPerReplicaAfter{pool=${pool.pool}}`, perReplicaAfter, calmRate, windowLabel),
      evidence(`errorRate{pool=${pool.pool}}`, main.errorRate, 0.05, windowLabel),
    ],
    expectedImpact: {
      summary: `Replicas ${pool.pool} has no load for stop costing money; each one left carries a load it has carried calmly before.`,
      requestsPerSPerReplica: { from: round(s.ratePerS / replicas, 3), to: round(perReplicaAfter, 3) },
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
    },
    confidence: scoreConfidence((calmRate - perReplicaAfter) / calmRate, main.requests, tuning.minRequests),
    scopePools: [pool.pool],
  };
}

/** The replay's TTFT p95 now and after, as an expected impact (nothing without a replay). */
function replayedTtft(replay: ReplayedScaleIn): { ttftP95Ms?: { from: number; to: number } } {
  if (!replay.outlook) return {};
  return {
    ttftP95Ms: {
      from: Math.round(replay.outlook.now.ttftP95Ms),
      to: Math.round(replay.outlook.after.ttftP95Ms),
    },
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
