import { type DetectContext, evidence } from './detect-context.ts';
import { type ReplayOutlook, replayAtReplicas } from './replay-prefill-queue.ts';
import { readFaultRate, readUncontendedMsPerToken, MIN_P95_SAMPLE } from './pool-signals.ts';
import { planScale } from '../objective/plan-scale.ts';
import type { ScaleInputs } from './scale-inputs.ts';

// A scale-in checked on the pool's own recent requests (see replay-prefill-queue.ts).

/** A scale-in's replica count once its recent requests were replayed there, and what the replay saw. */
export interface ReplayedScaleIn {
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
export function replayScaleIn(ctx: DetectContext, s: ScaleInputs, to: number): ReplayedScaleIn | null {
  const { tuning } = ctx;
  const unchecked = { to, outlook: null, note: '', evidence: [] };
  const msPerToken = readUncontendedMsPerToken(s.learning, ctx.tuning);
  const sloMs = s.sloMs;
  if (sloMs === null || msPerToken === null || s.pool.arrivals.length < MIN_P95_SAMPLE) return unchecked;
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
    // The replay compares with now; the model asks whether n replicas will still reach the
    // attainment target at the load forecast until the scale-in is verified (a rising load).
    const plan = planScale({
      arrivals: s.pool.arrivals,
      replicas: s.replicas,
      mainRatePerS: s.pool.mainRatePerS,
      mainWindowS: ctx.obs.windowMs / 1000,
      fastRatePerS: s.pool.fastRatePerS,
      fastWindowS: ctx.obs.fastWindowMs / 1000,
      horizonS: ctx.control.verify_after_s,
      msPerToken,
      sloMs,
      // TTFT only, not the e2e SLO yet: a pool whose requests cannot all meet the e2e SLO unqueued
      // has that attainable share as its requirement (size-pool.ts), which a pessimistic prediction
      // never reaches, so with it such a pool would never be scaled in (agentic-coding's 70B pool
      // kept 4 replicas). sizePool's bound at the attainable share must allow for its uncertainty first.
      e2eSloMs: null,
      successShare: 1 - (readFaultRate(s.pool.main) ?? 0),
      usdPerReplicaHour: s.costPerReplicaHour,
      attainmentTarget: ctx.control.slo_attainment_target,
      floor: found.n,
      ceiling: s.replicas,
    });
    if (plan && plan.sizing.surely >= s.replicas) return null;
    if (plan && plan.sizing.surely > found.n) {
      const outlook = holds(plan.sizing.surely);
      if (!outlook) return null;
      found = { n: plan.sizing.surely, outlook };
    }
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
