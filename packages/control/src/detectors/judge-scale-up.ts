import { boundShare, nearSloShare } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import {
  type DetectContext,
  evidence,
  isCircuitOpen,
  isRecovering,
  isWithinCooldown,
  readMemory,
} from './detect-context.ts';
import { MIN_JUDGED_SAMPLE, readUncontendedMsPerToken, round, MIN_P95_SAMPLE } from './pool-signals.ts';
import { allOf, anyOf, confidenceOf, ratioZ } from '../objective/confidence.ts';
import { weighScaleUpGain } from '../objective/weigh-scale-up.ts';
import { type ScaleInputs, hourlyCost } from './scale-inputs.ts';
import { scaleUpUtilization } from '../objective/operating-bounds.ts';

// Load-bound TTFT or high utilization → more replicas, sized for the target utilization or grown with
// the pressure; a scale-up that buys fewer tasks within the SLO than it costs waits for a human.

const WAITS_UNPROFITABLE =
  'it would buy fewer tasks within the SLO than it costs, so a human decides whether the SLO is worth the money';

export function judgeScaleUp(ctx: DetectContext, s: ScaleInputs): Candidate | null {
  const { tuning, control, fastWindowLabel } = ctx;
  const { pool, replicas, util, load, sloMs } = s;
  const fast = pool.fast;
  const ttftP95 = fast?.ttftMs.p95 ?? null;
  const enoughSample = (fast?.requests ?? 0) >= MIN_JUDGED_SAMPLE;
  const faulty =
    ctx.suspects.has(pool.pool) ||
    isCircuitOpen(ctx, pool.pool) ||
    s.shiftedForResource ||
    isFreshlyShiftedAway(ctx, pool);
  const sloPressure = sloMs !== null && ttftP95 !== null ? ttftP95 / sloMs : null;
  const breach = sloPressure !== null ? sloPressure > nearSloShare(tuning) : load.loadBound;
  const hotAt = scaleUpUtilization(control);
  const hot = util.value !== null && util.value >= hotAt;
  if (faulty || !enoughSample || !((load.loadBound && breach) || hot) || replicas >= s.ceiling) return null;

  // With a known capacity, size for the target utilization. Without one, grow with the pressure:
  // how far TTFT is past the SLO or prefill is slowed by contention, between 1.25× and clearly more
  // (slowRatio ×) per step (a cold start takes minutes; a pool that overshoots is scaled back in
  // after the cooldown).
  const pressure = Math.max(sloPressure ?? 1, load.contention ?? 1);
  // A known capacity is in requests, learned on the prompts of its day: a pool whose TTFT is
  // load-bound past the SLO at a rate that capacity says it carries is serving heavier requests now,
  // and grows with the pressure as when its capacity is unknown. Not a failing pool: its latency is
  // errors and their retries as much as load.
  const byPressure = Math.ceil(replicas * Math.min(tuning.slowRatio, Math.max(1.25, pressure)));
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
      ? `TTFT p95 ${Math.round(ttftP95 ?? 0)} ms${sloMs ? ` against a ${sloMs} ms SLO` : ''} is load-bound (${Math.round((load.queueShare ?? 0) * 100)}% of it queueing${load.contention !== null && load.contention >= tuning.usualRatio ? `, prefill ${round(load.contention, 1)}× slower per token than when uncontended` : ''})`
      : `utilization ${round(util.value ?? 0, 2)} (${util.basis}) is above ${hotAt}`;
  // It rests on whichever reading triggered it (TTFT near the SLO, utilization past the
  // scale-up bound, queueing or contention past theirs — the surest of them) and, where the fleet's
  // cost per task within the SLO prices it, on the replicas paying for themselves (weigh-scale-up.ts).
  const n = fast?.requests ?? 0;
  const triggered = anyOf(
    sloMs !== null && ttftP95 !== null
      ? ratioZ(ttftP95, nearSloShare(tuning) * sloMs, n, 'above')
      : Number.NaN,
    util.value !== null ? ratioZ(util.value, hotAt, n, 'above') : Number.NaN,
    load.queueShare !== null ? ratioZ(load.queueShare, boundShare(tuning), n, 'above') : Number.NaN,
    load.contention !== null ? ratioZ(load.contention, tuning.slowRatio, n, 'above') : Number.NaN,
  );
  const confidence = confidenceOf(Number.isNaN(worth.z) ? triggered : allOf(triggered, worth.z), n);
  return {
    kind: 'scale',
    target: { pool: pool.pool },
    action: { from: replicas, to },
    direction: 'increase',
    reason: `Pool ${pool.pool}: ${why}; add ${to - replicas} replica${to - replicas === 1 ? '' : 's'} (${replicas} → ${to})${worth.note}.`,
    evidence: [
      evidence(`ttftMs.p95{pool=${pool.pool}}`, ttftP95, sloMs, fastWindowLabel),
      evidence(`queueShareOfTtft{pool=${pool.pool}}`, load.queueShare, boundShare(tuning), fastWindowLabel),
      evidence(
        `prefillMsPerTokenVsFloor{pool=${pool.pool}}`,
        load.contention,
        tuning.slowRatio,
        fastWindowLabel,
      ),
      evidence(`utilization{pool=${pool.pool},basis=${util.basis}}`, util.value, hotAt, fastWindowLabel),
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
    confidence,
    // Not worth its cost under the objective: a human decides.
    ...(worth.beneficial ? {} : { waits: WAITS_UNPROFITABLE }),
    scopePools: [pool.pool],
  };
}

/**
 * Does the scale-up lower the fleet's cost per task within the SLO (weigh-scale-up.ts), read from the
 * pool's goodput and load now and the fleet's rate of tasks within the SLO and its cost.
 * A failing pool is weighed the same way: its timeouts from queueing are among the out-of-SLO share
 * that load explains and are won back; failures that come with prompts too long for the SLO even
 * when calm are not (the same ceiling as below), and more replicas would only fail them at a higher
 * cost.
 */
function weighScaleUp(
  ctx: DetectContext,
  s: ScaleInputs,
  to: number,
): { beneficial: boolean; z: number; note: string; evidence: ReturnType<typeof evidence>[] } {
  const main = s.pool.main;
  const fast = s.pool.fast;
  const fleet = readFleetGoodRate(ctx);
  if (fleet === null) return { beneficial: true, z: Number.NaN, note: '', evidence: [] };
  const { goodPerS, costPerHour } = fleet;
  // The pool's goodput as it is now (short window, when it holds enough requests), so a sudden
  // overload counts; its rate over the control window, as the fleet's (readFleetGoodRate).
  const recent = fast !== null && fast.requests >= MIN_P95_SAMPLE && fast.goodput !== null;
  const goodput = recent ? fast.goodput : (main?.goodput ?? null);
  const ratePerS = s.pool.mainRatePerS;
  if (goodput === null || s.costPerReplicaHour === null || costPerHour <= 0) {
    return { beneficial: true, z: Number.NaN, note: '', evidence: [] };
  }
  const loadShare = Math.max(s.load.queueShare ?? 0, s.load.contention ? 1 - 1 / s.load.contention : 0);
  // No more than the pool reached when calm, nor than the share of its prompts that prefill within
  // the SLO at its uncontended speed: long prompts that miss the SLO on an idle replica are not won
  // back by more replicas (a pool never calm since Governor started has only the second).
  const reachable = readReachableShare(ctx, s);
  const ceiling = Math.min(s.learning?.calmGoodput ?? 1, reachable ?? 1);
  const { gainPerS, before, after, beneficial, z } = weighScaleUpGain({
    goodput,
    requests: (recent ? fast?.requests : main?.requests) ?? 0,
    loadShare,
    ceiling,
    ratePerS,
    fleetGoodPerS: goodPerS,
    fleetUsdPerHour: costPerHour,
    addedUsdPerHour: (to - s.replicas) * s.costPerReplicaHour,
  });
  const noGain =
    gainPerS > 0
      ? ''
      : "by the pool's prompts and its speed when calm, none more would come within the SLO; ";
  return {
    beneficial,
    z,
    note: beneficial
      ? ''
      : `; it would buy fewer tasks within the SLO than it costs (${noGain}tasks within the SLO per dollar ${round(before, 1)} → ${round(after, 1)}), so it waits for a human`,
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
  if (s.sloMs === null || msPerToken === null || arrivals.length < MIN_P95_SAMPLE) return null;
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
