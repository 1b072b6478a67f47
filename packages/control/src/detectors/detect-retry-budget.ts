import type { Candidate } from '../engine/control-types.ts';
import { type DetectContext, evidence } from './detect-context.ts';
import { readLoad, round, scoreConfidence, summarizeScope } from './pool-signals.ts';

// Retries that pile onto a struggling fleet (a retry storm) cost GPU time and earn nothing: cap
// retries per first attempt at the gateway while failures are elevated, lift the cap once the fleet
// is healthy again. Fleet-wide (empty target): clients retry across pools and models.

export function detectRetryBudget(ctx: DetectContext): Candidate[] {
  const { tuning, fastWindowLabel } = ctx;
  const demand = ctx.obs.priorities;
  const requests = demand.reduce((s, d) => s + d.requests, 0);
  if (requests < tuning.minRequests) return [];
  const weighted = (pick: (d: (typeof demand)[number]) => number | null) => {
    let sum = 0;
    let weight = 0;
    for (const d of demand) {
      const v = pick(d);
      if (v === null || !Number.isFinite(v)) continue;
      sum += v * d.requests;
      weight += d.requests;
    }
    return weight > 0 ? sum / weight : null;
  };
  const retryRatio = weighted((d) => d.retryRatio);
  // Failures where work was done: the pools' error rate. Requests the gateway itself turned away
  // (shedding, budgets) are not failures of the fleet.
  const errorRate = summarizeScope(ctx.obs.pools, 'fast').errorRate;
  const queueBoundPools = ctx.obs.pools.filter(
    (p) => (p.fast?.requests ?? 0) > 0 && readLoad(p, ctx.state.learning.get(p.pool), tuning).loadBound,
  ).length;
  const current = ctx.state.actuated.retryBudget[''] ?? null;
  const ev = [
    evidence('retryRatio', retryRatio, tuning.retryRatioHigh, fastWindowLabel),
    evidence('errorRate', errorRate, 0.05, fastWindowLabel),
    evidence('loadBoundPools', queueBoundPools, 0, fastWindowLabel),
  ];

  // A storm amplifies itself: retries of failed requests land on pools already load-bound. A budget
  // turns each retry it refuses into a failed task, so failures alone (which retries may fix) are not
  // enough.
  const storm =
    retryRatio !== null &&
    retryRatio >= tuning.retryRatioHigh &&
    (errorRate ?? 0) >= 0.05 &&
    queueBoundPools > 0;
  if (storm && (current === null || current > tuning.retryBudget)) {
    return [
      {
        kind: 'retry_budget',
        target: {},
        action: { maxRetryRatio: tuning.retryBudget },
        direction: 'increase',
        reason: `Retries are ${round((retryRatio ?? 0) * 100, 0)}% of first attempts while ${(errorRate ?? 0) >= 0.05 ? `${round((errorRate ?? 0) * 100, 1)}% of requests fail` : `${queueBoundPools} pool(s) are load-bound`}; cap retries at ${tuning.retryBudget} per first attempt so they stop amplifying the failure.`,
        evidence: ev,
        expectedImpact: {
          summary:
            'Retry traffic falls to the budget; capacity goes to first attempts, so fewer tasks fail and less is paid for failed work.',
          retryRatio: { from: round(retryRatio ?? 0), to: tuning.retryBudget },
        },
        confidence: scoreConfidence(
          ((retryRatio ?? 0) - tuning.retryRatioHigh) / tuning.retryRatioHigh,
          requests,
          tuning.minRequests,
        ),
        scopePools: ctx.obs.pools.map((p) => p.pool),
      },
    ];
  }
  const calm = (errorRate ?? 0) <= 0.02 && queueBoundPools === 0;
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
        confidence: scoreConfidence(0.4, requests, tuning.minRequests),
        scopePools: ctx.obs.pools.map((p) => p.pool),
      },
    ];
  }
  return [];
}
