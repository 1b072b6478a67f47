import { predictedGoodput } from './peer-headroom.ts';
import { cheaperRatio } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import {
  MIN_WEIGHT_STEP,
  TRAFFIC_STEP,
  type DetectContext,
  evidence,
  groupByModel,
  isCircuitOpen,
  normalizeWeights,
  readWeights,
} from './detect-context.ts';
import { readLoad, readUncontendedMsPerToken, round, MIN_P95_SAMPLE } from './pool-signals.ts';
import { confidenceOf, ratioZ } from '../objective/confidence.ts';
import { calmErrorRate } from '../objective/operating-bounds.ts';

// The objective is cost per successful task under the SLO (packages/control/README.md). Among healthy pools serving
// the same model, one that prefills a prompt token for clearly less money (its uncontended ms per
// token × GPUs × $/GPU-hour) and meets the SLO at least as well should carry more of the model's
// traffic: step by step, while it has room, and never below a floor share for the other pool (kept
// warm for failover and so its signals stay current). The pool that loses traffic is scaled in by the
// scale policy once its load allows; the one that gains it has room by construction, and the scale
// policy grows it if it ever turns load-bound.

const MIN_SHARE = 0.1;

interface PoolCost {
  pool: PoolView;
  /** $ per million prefilled tokens at the pool's uncontended speed. */
  usdPerMTokens: number;
  goodput: number | null;
  contention: number | null;
  loadBound: boolean;
}

export function detectCostEfficiency(ctx: DetectContext, skipModels: ReadonlySet<string>): Candidate[] {
  const out: Candidate[] = [];
  const { tuning, windowLabel } = ctx;
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    if (pools.length < 2 || skipModels.has(model) || ctx.state.actuated.recovery[model]) continue;
    const healthy = pools.every(
      (p) =>
        !ctx.suspects.has(p.pool) &&
        !isCircuitOpen(ctx, p.pool) &&
        (ctx.state.learning.get(p.pool)?.outlierStreak ?? 0) === 0 &&
        (p.main?.errorRate ?? 0) <= calmErrorRate(ctx.control, ctx.tuning),
    );
    if (!healthy) continue;
    const costs: PoolCost[] = [];
    for (const p of pools) {
      const learning = ctx.state.learning.get(p.pool);
      const floor = readUncontendedMsPerToken(learning, tuning);
      if (floor === null || p.gpuHourUsd === null || (p.main?.requests ?? 0) < MIN_P95_SAMPLE) continue;
      const load = readLoad(p, learning, tuning);
      costs.push({
        pool: p,
        usdPerMTokens: (floor * p.gpusPerReplica * p.gpuHourUsd * 1e6) / 3_600_000,
        goodput: p.main?.goodput ?? null,
        contention: load.contention,
        loadBound: load.loadBound,
      });
    }
    if (costs.length < 2) continue;
    const cheapest = costs.reduce((a, b) => (b.usdPerMTokens < a.usdPerMTokens ? b : a));
    const dearest = costs.reduce((a, b) => (b.usdPerMTokens > a.usdPerMTokens ? b : a));
    if (cheapest === dearest || cheapest.usdPerMTokens > cheaperRatio(tuning) * dearest.usdPerMTokens)
      continue;
    // The cheaper pool must have room and hold the SLO at least as well.
    // Room: prefilling at its uncontended speed, within the as-usual band of it.
    if (cheapest.loadBound || (cheapest.contention ?? 1) >= tuning.usualRatio) continue;
    if ((cheapest.goodput ?? 0) < (dearest.goodput ?? 0) - 0.01) continue;
    const weights = readWeights(ctx, model, pools);
    const from = dearest.pool.pool;
    const to = cheapest.pool.pool;
    const current = weights[from] ?? 0;
    const moved = Math.min(current - MIN_SHARE, Math.max(0.05, current * TRAFFIC_STEP));
    if (moved < MIN_WEIGHT_STEP) continue;
    const next = normalizeWeights({ ...weights, [from]: current - moved, [to]: (weights[to] ?? 0) + moved });
    const ratio = dearest.usdPerMTokens / cheapest.usdPerMTokens;
    // It rests on the cost ratio being past the as-usual band, each cost read from its pool's requests.
    const n = Math.min(cheapest.pool.main?.requests ?? 0, dearest.pool.main?.requests ?? 0);
    const confidence = confidenceOf(ratioZ(ratio, 1 / cheaperRatio(tuning), n, 'above'), n);
    out.push({
      kind: 'shift_traffic',
      target: { model, pool: from },
      action: { weights: next },
      direction: 'decrease',
      reason: `Pool ${from} prefills ${model} at ${round(ratio, 2)}× the cost per token of ${to} ($${round(dearest.usdPerMTokens, 2)} vs $${round(cheapest.usdPerMTokens, 2)} per million tokens) and ${to} has room and meets the SLO as well; move ${Math.round(moved * 100)}% of ${model}'s traffic to ${to}.`,
      evidence: [
        evidence(`usdPerMillionPrefillTokens{pool=${from}}`, dearest.usdPerMTokens, null, 'learned'),
        evidence(
          `usdPerMillionPrefillTokens{pool=${to}}`,
          cheapest.usdPerMTokens,
          cheaperRatio(tuning) * dearest.usdPerMTokens,
          'learned',
        ),
        evidence(`goodput{pool=${from}}`, dearest.goodput, null, windowLabel),
        evidence(`goodput{pool=${to}}`, cheapest.goodput, null, windowLabel),
        evidence(
          `prefillMsPerTokenVsFloor{pool=${to}}`,
          cheapest.contention,
          tuning.usualRatio,
          ctx.fastWindowLabel,
        ),
      ],
      expectedImpact: {
        summary: `Cost per successful ${model} task falls; ${from} can shed replicas while ${to} grows to carry the moved share.`,
        weight: { pool: from, from: round(current), to: round(next[from] ?? 0) },
        ...predictedGoodput(ctx, pools, next),
      },
      confidence,
      scopePools: pools.map((p) => p.pool),
      cause: 'efficiency',
    });
  }
  return out;
}
