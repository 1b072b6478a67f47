import { predictedGoodput } from './peer-headroom.ts';
import { boundShare, nearSloShare } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import {
  MIN_WEIGHT_STEP,
  type DetectContext,
  evidence,
  groupByModel,
  isCircuitOpen,
  normalizeWeights,
  readWeights,
} from './detect-context.ts';
import {
  readUtilizationNow,
  readPrefillShare,
  readQueueShare,
  round,
  MIN_P95_SAMPLE,
} from './pool-signals.ts';
import { confidenceOf, shareDifferenceZ } from '../objective/confidence.ts';
import { roomUtilization } from '../objective/operating-bounds.ts';

/** How much higher a peer's prefix-cache hit rate must be for it to keep the model's traffic warm. */
const AFFINITY_GAP = 0.2;

// Cache-miss-bound prefill (TTFT mostly prefill, not queueing, and a prefix-cache hit rate well below
// a peer's) is fixed by restoring affinity, not by adding replicas: concentrate the model's traffic
// on the pool that keeps prefixes warm, as far as its spare capacity allows. More replicas would
// spread prefixes even thinner.

export function detectCacheAffinity(ctx: DetectContext, skipModels: ReadonlySet<string>): Candidate[] {
  const out: Candidate[] = [];
  const { tuning, fastWindowLabel, slo } = ctx;
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    if (pools.length < 2 || skipModels.has(model)) continue;
    const usable = pools.filter(
      (p) =>
        !ctx.suspects.has(p.pool) && !isCircuitOpen(ctx, p.pool) && (p.fast?.requests ?? 0) >= MIN_P95_SAMPLE,
    );
    if (usable.length < 2) continue;
    const missBound = usable.filter((p) => {
      const prefill = readPrefillShare(p.fast);
      const queue = readQueueShare(p.fast);
      const breach =
        slo.ttft_ms === undefined || (p.fast!.ttftMs.p95 ?? 0) > nearSloShare(tuning) * slo.ttft_ms;
      return (
        prefill !== null && prefill >= boundShare(tuning) && (queue ?? 0) < boundShare(tuning) / 2 && breach
      );
    });
    for (const pool of missBound) {
      const hit = pool.fast!.cacheHitRate;
      if (hit === null) continue;
      const keeper = usable
        .filter(
          (p) =>
            p.pool !== pool.pool &&
            p.fast!.cacheHitRate !== null &&
            p.fast!.cacheHitRate! >= hit + AFFINITY_GAP,
        )
        .filter((p) => {
          const u = readUtilizationNow(p, ctx.state.learning.get(p.pool));
          return u !== null && u <= roomUtilization(ctx.control, tuning);
        })
        .sort((a, b) => b.fast!.cacheHitRate! - a.fast!.cacheHitRate!)[0];
      if (!keeper) continue;
      const weights = readWeights(ctx, model, pools);
      const current = weights[pool.pool] ?? 0;
      const moved = current * 0.3;
      if (moved < MIN_WEIGHT_STEP) continue;
      const next = {
        ...weights,
        [pool.pool]: current - moved,
        [keeper.pool]: (weights[keeper.pool] ?? 0) + moved,
      };
      const after = normalizeWeights(next);
      out.push({
        kind: 'shift_traffic',
        target: { model, pool: pool.pool },
        action: { weights: after },
        direction: 'decrease',
        reason: `Pool ${pool.pool} is cache-miss-bound (prefill is ${Math.round((readPrefillShare(pool.fast) ?? 0) * 100)}% of TTFT, prefix-cache hit rate ${Math.round(hit * 100)}% vs ${Math.round(keeper.fast!.cacheHitRate! * 100)}% on ${keeper.pool}); restore affinity by moving ${Math.round(moved * 100)}% of ${model}'s traffic to ${keeper.pool}.`,
        evidence: [
          evidence(
            `prefillShareOfTtft{pool=${pool.pool}}`,
            readPrefillShare(pool.fast),
            boundShare(tuning),
            fastWindowLabel,
          ),
          evidence(`cacheHitRate{pool=${pool.pool}}`, hit, null, fastWindowLabel),
          evidence(
            `cacheHitRate{pool=${keeper.pool}}`,
            keeper.fast!.cacheHitRate,
            hit + AFFINITY_GAP,
            fastWindowLabel,
          ),
        ],
        expectedImpact: {
          summary: `More ${model} prompts hit a warm prefix cache; prefill time and TTFT fall without new replicas.`,
          weight: { pool: pool.pool, from: round(current), to: round(current - moved) },
          ...predictedGoodput(ctx, pools, after),
        },
        // It rests on the keeper's hit rate being past the pool's by the affinity gap.
        confidence: confidenceOf(
          shareDifferenceZ(
            keeper.fast!.cacheHitRate!,
            keeper.fast!.requests,
            hit,
            pool.fast!.requests,
            AFFINITY_GAP,
          ),
          Math.min(keeper.fast!.requests, pool.fast!.requests),
        ),
        scopePools: pools.map((p) => p.pool),
        cause: 'resource',
      });
      break;
    }
  }
  return out;
}
