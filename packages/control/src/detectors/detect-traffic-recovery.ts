import { predictedGoodput } from './peer-headroom.ts';
import type { Candidate } from '../engine/control-types.ts';
import {
  MIN_WEIGHT_STEP,
  TRAFFIC_STEP,
  type DetectContext,
  evidence,
  groupByModel,
  isCircuitOpen,
  isWithinCooldown,
  normalizeWeights,
  readMemory,
  readWeights,
} from './detect-context.ts';
import { assessPoolAgainstPeers } from './assess-pool-against-peers.ts';
import { readScaleReadiness } from './scale-readiness.ts';
import { planPeerCapacity } from './plan-peer-capacity.ts';
import { MIN_JUDGED_SAMPLE, round } from './pool-signals.ts';
import { confidenceOf, shareZ } from '../objective/confidence.ts';
import { errorBudget } from '../objective/operating-bounds.ts';

// After traffic was taken away from a pool, give it back step by step once it looks healthy again:
// a pool without traffic gets a small probe share first (its signals say nothing otherwise); a pool
// whose share is healthy gets more, up to the weights it had before Governor stepped in. Recovery is a
// reversal of the earlier shift, so the engine holds it until that shift's cooldown has passed.

export function detectTrafficRecovery(ctx: DetectContext): Candidate[] {
  const out: Candidate[] = [];
  const { tuning, fastWindowLabel } = ctx;
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    const recovery = ctx.state.actuated.recovery[model];
    if (!recovery) continue;
    const baseline = recovery.baseline;
    const weights = readWeights(ctx, model, pools);
    const recovering = pools
      .filter((p) => recovery.pools.includes(p.pool))
      .filter((p) => (baseline[p.pool] ?? 0) - (weights[p.pool] ?? 0) > MIN_WEIGHT_STEP)
      .filter((p) => !ctx.suspects.has(p.pool) && !isCircuitOpen(ctx, p.pool))
      .filter((p) => (ctx.state.learning.get(p.pool)?.outlierStreak ?? 0) === 0)
      // Replicas still starting for the share it took back last: the next share waits for them.
      .filter((p) => readScaleReadiness(ctx, p).settled);
    const candidate = recovering[0];
    if (!candidate) continue;
    const pool = candidate.pool;
    const original = baseline[pool]!;
    const current = weights[pool] ?? 0;
    const assessment = assessPoolAgainstPeers(ctx, candidate, pools);
    const minSample = MIN_JUDGED_SAMPLE;
    const hasTraffic = assessment.requests >= minSample;
    const target = hasTraffic
      ? Math.min(original, Math.max(2 * current, current + TRAFFIC_STEP * original))
      : Math.min(original, Math.max(current, TRAFFIC_STEP * original, 0.05));
    if (target - current < MIN_WEIGHT_STEP) continue;
    const next: Record<string, number> = { ...weights, [pool]: target };
    const others = pools.filter((p) => p.pool !== pool);
    const moved = target - current;
    const othersTotal = others.reduce((sum, p) => sum + (weights[p.pool] ?? 0), 0);
    for (const p of others) {
      const share = othersTotal > 0 ? (weights[p.pool] ?? 0) / othersTotal : 1 / others.length;
      next[p.pool] = Math.max(0, (weights[p.pool] ?? 0) - moved * share);
    }
    const action = { weights: normalizeWeights(next) };
    // It rests on the pool serving its share without faults beyond the error budget. A probe share
    // to a pool out of rotation rests on nothing measured yet: as likely as not, which is what the
    // probe finds out.
    const confidence = hasTraffic
      ? confidenceOf(
          shareZ(assessment.errorRate ?? 0, errorBudget(ctx.control), assessment.requests, 'below'),
          assessment.requests,
        )
      : confidenceOf(0, 0);
    out.push({
      kind: 'shift_traffic',
      target: { model, pool },
      action,
      direction: 'increase',
      reason: hasTraffic
        ? `Pool ${pool} has served its reduced share of ${model} cleanly (error rate ${pctText(assessment.errorRate)}); give back traffic toward its earlier weight ${round(original, 2)}.`
        : `Pool ${pool} has been out of rotation for ${model}; send it a probe share to see whether it has recovered.`,
      evidence: [
        evidence(`weight{pool=${pool}}`, current, original, 'current'),
        evidence(`errorRate{pool=${pool}}`, assessment.errorRate, errorBudget(ctx.control), fastWindowLabel),
        evidence(
          `engineTimeVsBaseline{pool=${pool}}`,
          assessment.slowdown,
          tuning.slowRatio,
          fastWindowLabel,
        ),
        evidence(`requests{pool=${pool}}`, assessment.requests, minSample, fastWindowLabel),
      ],
      expectedImpact: {
        summary: `${pool} takes ${round(target * 100, 0)}% of ${model}'s traffic again without raising its error rate or latency.`,
        weight: { pool, from: round(current), to: round(target) },
        ...predictedGoodput(ctx, pools, action.weights),
      },
      confidence,
      scopePools: pools.map((p) => p.pool),
      cause: 'recovery',
    });
    // The share coming back needs the replicas it had: the pool may have been scaled in while its
    // circuit was open. (A probe share is what its replicas are there to test.) Only with a shift the
    // engine can apply: inside the last shift's cooldown it holds the shift, so the replicas wait too.
    const last = readMemory(ctx, 'shift_traffic', { model, pool });
    if (hasTraffic && !isWithinCooldown(ctx, last))
      for (const c of planPeerCapacity(ctx, model, pools, weights, action.weights, null))
        if (c.target.pool === pool) out.push({ ...c, confidence });
  }
  return out;
}

function pctText(v: number | null): string {
  return v === null ? 'n/a' : `${round(v * 100, 1)}%`;
}
