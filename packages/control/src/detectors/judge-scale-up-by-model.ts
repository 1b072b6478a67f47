import { MAX_ARRIVALS_PER_POOL } from '@governor/signals';
import type { Candidate } from '../engine/control-types.ts';
import { normalCdf } from '../health/pool-health.ts';
import type { PoolPrediction } from '../model/predict-pool.ts';
import { planScale, type ScalePlan } from '../objective/plan-scale.ts';
import { type DetectContext, evidence, readMemory } from './detect-context.ts';
import { readFaultRate, readUncontendedMsPerToken, round } from './pool-signals.ts';
import { type ScaleInputs, hourlyCost } from './scale-inputs.ts';

// A scale-up sized by the pool model (objective/plan-scale.ts): the cheapest replica count whose
// predicted share of requests within the SLO (TTFT and e2e) reaches the attainment target — or what
// the requests attain at all, with no queueing — at the load forecast until the change is verified.
// The uncertainty band is the hysteresis: a pool is scaled up only when even the optimistic
// prediction on its count falls short. Replicas are bought only for the requests within the SLO the
// model predicts they win; a pool whose misses no replica count recovers (prompts or outputs too long
// for the SLO) gets none. The reason and the confidence come from the predicted gain and its
// uncertainty; the prediction goes into expectedImpact, where verification reads it.
//
// NOT WIRED YET: detect-scale.ts still calls judge-scale-up.ts alone. Wired in (judgeScaleUp asking
// planPoolSize first, the old rules where it returns null), bench control --quick went: held-out
// s4/s5 agentic-coding regret 2.55/2.44 -> 1.84/1.84 (cost 23.90/22.83 -> 17.23), burstgpt-1 equal,
// retry-storm x azure-conv success/$ 269.6/293.2 -> 284.3/281.9; tuning s1/s2 azure-conv equal,
// azure-code 138.3/140.5 -> 133.0/135.3 (goodput 0.462/0.246 -> 0.458/0.274), mooncake 25.1 -> 26.1
// (s1). But six scale-up tests in apps/server/src/api/control-recommendations.int.test.ts assert
// the old rules' outputs (2 -> 4, their weighing notes) and fail: they need rewriting as properties.

/**
 * The model's plan for the pool's size, or null where it lacks inputs (SLO, uncontended speed,
 * sample) or its replay does not explain the queue the requests measured.
 */
export function planPoolSize(
  ctx: DetectContext,
  s: ScaleInputs,
  floor: number,
  ceiling: number,
): ScalePlan | null {
  const msPerToken = readUncontendedMsPerToken(s.learning, ctx.tuning);
  const arrivals = s.pool.arrivals;
  if (msPerToken === null || (s.sloMs === null && s.e2eSloMs === null)) return null;
  if (arrivals.length < ctx.tuning.minRequests) return null;
  // Rates over the part of the control window that holds requests: as Governor starts (or a pool's
  // traffic begins) the window's rate reads low against the short window's, which the forecast
  // would take for a steep rise. An uncapped sample spans what the store holds.
  const windowS = ctx.obs.windowMs / 1000;
  const fastS = ctx.obs.fastWindowMs / 1000;
  const spanS = (arrivals.at(-1)!.arriveMs - arrivals[0]!.arriveMs) / 1000;
  const heldS =
    arrivals.length >= MAX_ARRIVALS_PER_POOL
      ? windowS
      : Math.min(windowS, Math.max(fastS, (spanS * arrivals.length) / (arrivals.length - 1)));
  const main = s.pool.main;
  const plan = planScale({
    arrivals,
    replicas: s.replicas,
    mainRatePerS: (s.pool.mainRatePerS * windowS) / heldS,
    mainWindowS: heldS,
    fastRatePerS: s.pool.fastRatePerS,
    fastWindowS: fastS,
    // Until the replicas asked for now serve: the pool's last cold start, else one interval.
    horizonS: readColdStartS(ctx, s) ?? ctx.control.interval_s,
    forecastBound: 'lower',
    msPerToken,
    sloMs: s.sloMs,
    e2eSloMs: s.e2eSloMs,
    successShare: 1 - (readFaultRate(main) ?? 0),
    usdPerReplicaHour: s.costPerReplicaHour,
    attainmentTarget: ctx.control.slo_attainment_target,
    floor,
    ceiling,
  });
  // Requests queued longer than the replay of their prefill explains (replicas held by decode, KV
  // blocks): the model cannot say what more replicas win. It judges only when what it leaves
  // unexplained is within the slack the attainment target leaves in the SLO.
  const sloMs = s.sloMs ?? s.e2eSloMs!;
  if (plan && plan.model.unexplainedQueueMs > (1 - ctx.control.slo_attainment_target) * sloMs) return null;
  return plan;
}

/** Seconds the pool's last scale-up took until its replicas were ready; null when not seen. */
function readColdStartS(ctx: DetectContext, s: ScaleInputs): number | null {
  const memory = readMemory(ctx, 'scale', { pool: s.pool.pool });
  if (memory?.direction !== 'increase' || memory.readyNs === undefined) return null;
  return Number(memory.readyNs - memory.appliedNs) / 1e9;
}

/** The scale-up the model asks for, or null when it asks for none. */
export function judgeScaleUpByModel(ctx: DetectContext, s: ScaleInputs, plan: ScalePlan): Candidate | null {
  const { pool, replicas } = s;
  const { sizing, loadFactor } = plan;
  // Hysteresis: the optimistic prediction on today's count already reaches the requirement.
  if (sizing.plausibly <= replicas) return null;
  const to = Math.min(s.ceiling, sizing.sufficient);
  if (to <= replicas) return null;
  const before = sizing.before;
  const after = sizing.after.replicas === to ? sizing.after : predictAt(plan, to);
  // A task spans more than the replayed sample (a session's other steps), so the tasks the replay
  // counts good are an upper bound: no more of them are won than the pool's goodput when it did not
  // queue (learned while calm), the task-level share no replica count improves on.
  const calm = s.learning?.calmGoodput ?? null;
  const taskCeiling =
    calm === null
      ? after.taskWithinSloShare
      : Math.max(before.taskWithinSloShare, Math.min(calm, after.taskWithinSloShare));
  const afterGoodPerS =
    after.taskWithinSloShare > 0 ? (after.goodTasksPerS * taskCeiling) / after.taskWithinSloShare : 0;
  const gainPerS = afterGoodPerS - before.goodTasksPerS;
  // No added replica raises the tasks within the SLO — not by one task before the change is
  // verified — so nothing is bought. (Sessions of many requests are good only when all of them are:
  // raising some requests into the SLO wins no task while others stay out of it.)
  if (!(gainPerS * ctx.control.verify_after_s >= 1) || !(after.withinSloShare > before.withinSloShare))
    return null;
  const addedUsdPerHour = s.costPerReplicaHour === null ? null : (to - replicas) * s.costPerReplicaHour;
  // Most tasks within the SLO per dollar: replicas whose tasks cost more than the fleet's do now
  // lower it; the model says they reach the target, a human says whether that is worth the money.
  const fleetPerUsd = readFleetGoodTasksPerUsd(ctx);
  const addedPerUsd =
    addedUsdPerHour !== null && addedUsdPerHour > 0 ? (gainPerS * 3600) / addedUsdPerHour : null;
  const worth = fleetPerUsd === null || addedPerUsd === null || addedPerUsd >= fleetPerUsd;
  const se = Math.hypot(before.uncertainty, after.uncertainty);
  const z = (after.withinSloShare - before.withinSloShare) / se;
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  const slo = [
    s.sloMs !== null ? `TTFT ≤ ${s.sloMs} ms` : null,
    s.e2eSloMs !== null ? `e2e ≤ ${s.e2eSloMs} ms` : null,
  ]
    .filter(Boolean)
    .join(', ');
  const perDollar =
    addedPerUsd === null
      ? ''
      : `, ${round(addedPerUsd, 1)} tasks within the SLO per added dollar${fleetPerUsd === null ? '' : ` against the fleet's ${round(fleetPerUsd, 1)}${worth ? '' : ', so it waits for a human'}`}`;
  const load =
    loadFactor > 1
      ? ` at the load expected until the change is verified (${round(loadFactor, 2)}× the window's)`
      : '';
  const reachable =
    sizing.required < ctx.control.slo_attainment_target
      ? ` (the target ${pct(ctx.control.slo_attainment_target)} is out of reach: ${pct(sizing.required)} of the requests meet the SLO with no queueing at all)`
      : ` (target ${pct(sizing.required)})`;
  const w = ctx.fastWindowLabel;
  return {
    kind: 'scale',
    target: { pool: pool.pool },
    action: { from: replicas, to },
    direction: 'increase',
    reason: `Pool ${pool.pool}: the pool model predicts ${pct(before.withinSloShare)} of its requests within the SLO (${slo}) on ${replicas} replica${replicas === 1 ? '' : 's'}${load}, ${pct(after.withinSloShare)} on ${to}${reachable}; add ${to - replicas} replica${to - replicas === 1 ? '' : 's'} (${replicas} → ${to}) for ${round(gainPerS, 3)} more tasks/s within the SLO (${pct(before.taskWithinSloShare)} → ${pct(taskCeiling)} of its tasks)${perDollar}.`,
    evidence: [
      evidence(`ttftMs.p95{pool=${pool.pool}}`, pool.fast?.ttftMs.p95 ?? null, s.sloMs, w),
      evidence(`requestsPerS{pool=${pool.pool}}`, s.ratePerS, null, w),
      evidence(`forecastLoadFactor{pool=${pool.pool}}`, loadFactor, null, ctx.windowLabel),
      evidence(
        `predictedWithinSloShare{pool=${pool.pool},replicas=${replicas}}`,
        before.withinSloShare,
        sizing.required,
        ctx.windowLabel,
      ),
      evidence(
        `predictedWithinSloShare{pool=${pool.pool},replicas=${to}}`,
        after.withinSloShare,
        sizing.required,
        ctx.windowLabel,
      ),
      evidence(`predictionUncertainty{pool=${pool.pool}}`, se, null, ctx.windowLabel),
      evidence('tasksWithinSloPerAddedUsd', addedPerUsd, fleetPerUsd, ctx.windowLabel),
      evidence(
        `replicas{pool=${pool.pool}}`,
        replicas,
        s.ceiling === Number.POSITIVE_INFINITY ? null : s.ceiling,
        'now',
      ),
    ],
    expectedImpact: {
      summary: `${pool.pool} serves ${pct(after.withinSloShare)} of its requests within the SLO once the new replicas are warm (${pct(before.withinSloShare)} on ${replicas}).`,
      ...shareAndLatency(before, after),
      goodTasksPerS: { from: round(before.goodTasksPerS, 3), to: round(afterGoodPerS, 3) },
      costUsdPerHour: { from: hourlyCost(s, replicas), to: hourlyCost(s, to) },
    },
    // How surely the added replicas raise the share within the SLO at all: the predicted gain over
    // its standard error, as a one-sided normal probability; below any sensible policy's
    // min_confidence when they would lower the fleet's tasks within the SLO per dollar.
    confidence: worth
      ? round(normalCdf(z), 2)
      : Math.min(round(normalCdf(z), 2), ctx.tuning.unprofitableConfidence),
    scopePools: [pool.pool],
  };
}

function predictAt(plan: ScalePlan, replicas: number): PoolPrediction {
  return plan.model.predict(replicas, plan.loadFactor);
}

/** The prediction verification holds the action to: within-SLO share, TTFT p95 and e2e p95. */
function shareAndLatency(
  before: PoolPrediction,
  after: PoolPrediction,
): Record<string, { from: number; to: number }> {
  const out: Record<string, { from: number; to: number }> = {
    withinSloShare: { from: round(before.withinSloShare, 4), to: round(after.withinSloShare, 4) },
    ttftP95Ms: { from: Math.round(before.ttftP95Ms), to: Math.round(after.ttftP95Ms) },
  };
  if (before.e2eP95Ms !== null && after.e2eP95Ms !== null)
    out.e2eP95Ms = { from: Math.round(before.e2eP95Ms), to: Math.round(after.e2eP95Ms) };
  return out;
}

/**
 * The fleet's tasks within the SLO per dollar: good tasks over the control window per second, over
 * what the fleet costs per hour now; null when a pool has no price.
 */
function readFleetGoodTasksPerUsd(ctx: DetectContext): number | null {
  let goodPerS = 0;
  let usdPerHour = 0;
  for (const p of ctx.obs.pools) {
    if (p.gpuHourUsd === null) return null;
    usdPerHour += (p.replicas ?? 0) * p.gpusPerReplica * p.gpuHourUsd;
    if (p.main?.goodput != null) goodPerS += (p.main.goodput * p.main.tasks) / (ctx.obs.windowMs / 1000);
  }
  return usdPerHour > 0 ? (goodPerS * 3600) / usdPerHour : null;
}
