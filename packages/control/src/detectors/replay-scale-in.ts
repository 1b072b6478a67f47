import { type DetectContext, evidence, loadWindowsOf } from './detect-context.ts';
import type { ReplayOutlook, ReplicaOutlook } from './replay-prefill-queue.ts';
import type { PoolPrediction } from '../model/predict-pool.ts';
import { readFaultRate, readUncontendedMsPerToken, MIN_P95_SAMPLE } from './pool-signals.ts';
import { type ScalePlan, planScale } from '../objective/plan-scale.ts';
import { readServedOn } from './read-pool-model.ts';
import { type Requirement, requirementOf } from '../objective/attainment.ts';
import type { ScaleInputs } from './scale-inputs.ts';

// A scale-in checked on the pool's own recent requests (see replay-prefill-queue.ts).

/** A scale-in's replica count once its recent requests were replayed there, and what the replay saw. */
export interface ReplayedScaleIn {
  to: number;
  outlook: ReplayOutlook | null;
  /** What the objective requires of the pool's tasks (attainment.ts); null when unchecked. */
  required: Requirement | null;
  note: string;
  evidence: ReturnType<typeof evidence>[];
}

/**
 * Checks a scale-in to `to` replicas with the pool model (objective/plan-scale.ts): its recent requests
 * replayed on each count from `to` up, at the load forecast until the scale-in is verified. The fewest
 * replicas whose prediction surely reaches what the objective requires of the pool's tasks
 * (objective/attainment.ts) is kept; none below today's count, no scale-in. Mean load says N−1
 * replicas carry the work; only the requests themselves say whether their prompts then queue behind
 * each other past the SLO. Without an SLO, enough requests or the pool's uncontended prefill speed,
 * `to` stands unchecked.
 */
export function replayScaleIn(ctx: DetectContext, s: ScaleInputs, to: number): ReplayedScaleIn | null {
  const unchecked = { to, outlook: null, required: null, note: '', evidence: [] };
  const plan = planScaleIn(ctx, s, to);
  if (!plan) return unchecked;
  const n = plan.sizing.surely;
  if (n >= s.replicas) return null;
  // What the change itself does, at today's load: verification holds the scale-in to this.
  const outlook: ReplayOutlook = {
    requests: s.pool.arrivals.length,
    now: toOutlook(plan.model.predict(s.replicas)),
    after: toOutlook(plan.model.predict(n)),
  };
  const shareText = (o: ReplicaOutlook) => `${Math.round(o.withinSloShare * 100)}%`;
  // Where clients give deadlines, the share of tasks that finish within them (attainment.ts).
  const finish = s.pool.arrivals.some((a) => a.deadlineMs !== undefined)
    ? `; ${Math.round(plan.model.predict(n).taskFinishShare * 100)}% of its tasks finish within their clients' deadlines (required ${Math.round(plan.model.attainableTaskFinishShare * 100)}%)`
    : '';
  return {
    to: n,
    outlook,
    required: requirementOf(plan.model, ctx.control.slo_attainment_target),
    note: ` Its last ${outlook.requests} requests replayed on ${n} replica${n === 1 ? '' : 's'}: TTFT p95 ${Math.round(outlook.now.ttftP95Ms)} → ${Math.round(outlook.after.ttftP95Ms)} ms, ${shareText(outlook.now)} → ${shareText(outlook.after)} of its tasks within the SLO (required ${Math.round(plan.sizing.required * 100)}%)${finish}.`,
    evidence: [
      evidence(
        `replayedTtftP95Ms{pool=${s.pool.pool},replicas=${n}}`,
        outlook.after.ttftP95Ms,
        s.sloMs,
        ctx.windowLabel,
      ),
      evidence(
        `replayedWithinSloShare{pool=${s.pool.pool},replicas=${n}}`,
        outlook.after.withinSloShare,
        plan.sizing.required,
        ctx.windowLabel,
      ),
    ],
  };
}

/** Whether the pool model can judge a scale-in of the pool (an SLO, its uncontended speed, a sample). */
export function canModelJudge(ctx: DetectContext, s: ScaleInputs): boolean {
  return planScaleIn(ctx, s, s.replicas) !== null;
}

/** The pool's scale plan with `to` as its floor; null where the model cannot judge. */
function planScaleIn(ctx: DetectContext, s: ScaleInputs, to: number): ScalePlan | null {
  const msPerToken = readUncontendedMsPerToken(s.learning, ctx.tuning);
  const sloMs = s.sloMs;
  if (sloMs === null || msPerToken === null || s.pool.arrivals.length < MIN_P95_SAMPLE) return null;
  const servedOn = readServedOn(ctx, s.pool.pool, s.replicas);
  return planScale({
    arrivals: s.pool.arrivals,
    replicas: s.replicas,
    ...(servedOn ? { servedOn } : {}),
    ...loadWindowsOf(ctx, s.pool),
    horizonS: ctx.control.verify_after_s,
    shareGain: s.shareGain,
    msPerToken,
    prefixHitRate: s.pool.prefixHitRate,
    sloMs,
    e2eSloMs: s.e2eSloMs,
    successShare: 1 - (readFaultRate(s.pool.main) ?? 0),
    kvUsage: s.pool.main?.memoryUtil ?? null,
    usdPerReplicaHour: s.costPerReplicaHour,
    attainmentTarget: ctx.control.slo_attainment_target,
    floor: to,
    ceiling: s.replicas,
  });
}

/** A prediction as the outlook verification and the reason read: the share is of tasks, as goodput's. */
function toOutlook(p: PoolPrediction): ReplicaOutlook {
  return {
    replicas: p.replicas,
    withinSloShare: p.taskWithinSloShare,
    uncertainty: p.taskUncertainty,
    ttftP95Ms: p.ttftP95Ms,
  };
}
