import { retryStormRatio } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import { type DetectContext, evidence } from './detect-context.ts';
import { readLoad, round, summarizeScope, MIN_P95_SAMPLE } from './pool-signals.ts';
import { allOf, confidenceOf, ratioZ, shareZ } from '../objective/confidence.ts';
import { calmErrorRate, errorBudget } from '../objective/operating-bounds.ts';

// Retries that pile onto a struggling fleet (a retry storm) cost GPU time and earn nothing: cap
// retries per first attempt at the gateway while failures are elevated, lift the cap once the fleet
// is healthy again. Fleet-wide (empty target): clients retry across pools and models.

/**
 * Fleet-wide over the short window: retries per first attempt (demand-weighted) and the pools' error
 * rate. Requests the gateway itself turned away (shedding, budgets) are not failures of the fleet.
 */
export function readRetryPressure(ctx: DetectContext): {
  requests: number;
  retryRatio: number | null;
  errorRate: number | null;
} {
  const demand = ctx.obs.priorities;
  let requests = 0;
  let sum = 0;
  let weight = 0;
  for (const d of demand) {
    requests += d.requests;
    if (d.retryRatio === null || !Number.isFinite(d.retryRatio)) continue;
    sum += d.retryRatio * d.requests;
    weight += d.requests;
  }
  return {
    requests,
    retryRatio: weight > 0 ? sum / weight : null,
    errorRate: summarizeScope(ctx.obs.pools, 'fast').errorRate,
  };
}

/** Retries at least retryStormRatio of first attempts while more requests fail than the error budget allows. */
export function isRetryStorming(
  ctx: DetectContext,
  { retryRatio, errorRate } = readRetryPressure(ctx),
): boolean {
  return (retryRatio ?? 0) >= retryStormRatio(ctx.tuning) && (errorRate ?? 0) >= errorBudget(ctx.control);
}

export function detectRetryBudget(ctx: DetectContext): Candidate[] {
  const { tuning, fastWindowLabel } = ctx;
  const budget = errorBudget(ctx.control);
  const pressure = readRetryPressure(ctx);
  const { requests, retryRatio, errorRate } = pressure;
  if (requests < MIN_P95_SAMPLE) return [];
  // Pools the load presses: their TTFT is queue-bound, or their requests already fail for want of
  // capacity (timeouts, rejections) — a pool whose backlog times requests out completes few of them,
  // so its queueing hardly shows in the TTFT of the ones that finish.
  const queueBoundPools = ctx.obs.pools.filter(
    (p) =>
      (p.fast?.requests ?? 0) > 0 &&
      (readLoad(p, ctx.state.learning.get(p.pool), tuning).loadBound ||
        (p.fast?.overloadRate ?? 0) >= budget),
  ).length;
  const current = ctx.state.actuated.retryBudget[''] ?? null;
  const ev = [
    evidence('retryRatio', retryRatio, retryStormRatio(tuning), fastWindowLabel),
    evidence('errorRate', errorRate, budget, fastWindowLabel),
    evidence('loadBoundPools', queueBoundPools, 0, fastWindowLabel),
  ];

  // A storm amplifies itself: retries of failed requests land on pools already load-bound. A budget
  // turns each retry it refuses into a failed task, so failures alone (which retries may fix) are not
  // enough.
  const storm = isRetryStorming(ctx, pressure) && queueBoundPools > 0;
  if (storm && (current === null || current > tuning.retryBudget)) {
    return [
      {
        kind: 'retry_budget',
        target: {},
        action: { maxRetryRatio: tuning.retryBudget },
        direction: 'increase',
        reason: `Retries are ${round((retryRatio ?? 0) * 100, 0)}% of first attempts while ${(errorRate ?? 0) >= budget ? `${round((errorRate ?? 0) * 100, 1)}% of requests fail` : `${queueBoundPools} pool(s) are load-bound`}; cap retries at ${tuning.retryBudget} per first attempt so they stop amplifying the failure.`,
        evidence: ev,
        expectedImpact: {
          summary:
            'Retry traffic falls to the budget; capacity goes to first attempts, so fewer tasks fail and less is paid for failed work.',
          retryRatio: { from: round(retryRatio ?? 0), to: tuning.retryBudget },
        },
        // It rests on a storm: retries past the storm ratio while failures are past the error budget.
        confidence: confidenceOf(
          allOf(
            ratioZ(retryRatio ?? 0, retryStormRatio(tuning), requests, 'above'),
            shareZ(errorRate ?? 0, budget, requests, 'above'),
          ),
          requests,
        ),
        scopePools: ctx.obs.pools.map((p) => p.pool),
      },
    ];
  }
  const calm = (errorRate ?? 0) <= calmErrorRate(ctx.control, tuning) && queueBoundPools === 0;
  if (current !== null && calm) {
    return [
      {
        kind: 'retry_budget',
        target: {},
        action: { maxRetryRatio: null },
        direction: 'decrease',
        reason: `Failures are back to ${round((errorRate ?? 0) * 100, 1)}% and no pool is queue-bound; lift the retry budget so clients retry transient errors freely again.`,
        evidence: ev,
        expectedImpact: {
          summary: 'Transient errors are retried again without loading the fleet.',
          errorRate: { from: round(errorRate ?? 0), to: round(errorRate ?? 0) },
        },
        // It rests on failures being back down.
        confidence: confidenceOf(
          shareZ(errorRate ?? 0, calmErrorRate(ctx.control, tuning), requests, 'below'),
          requests,
        ),
        scopePools: ctx.obs.pools.map((p) => p.pool),
      },
    ];
  }
  return [];
}
