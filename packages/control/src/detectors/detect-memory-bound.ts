import { predictedGoodput } from './peer-headroom.ts';
import { boundShare } from '../engine/control-tuning.ts';
import { UTILIZATION_BOUNDS, classifyUtilizationRatio } from '@governor/conventions';
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
import { readQueueShare, readUtilizationNow, round, MIN_P95_SAMPLE } from './pool-signals.ts';
import { roomUtilization } from '../objective/operating-bounds.ts';
import { allOf, confidenceOf, ratioZ } from '../objective/confidence.ts';

// A memory-bound pool (KV cache full long before compute: memory_util / compute_util > 1.2) is not
// helped by more of the same replicas as much as by a pool with more HBM headroom (packages/control/README.md):
// move part of its traffic to a peer serving the same model whose KV cache has room. Without such
// a peer, the scale policy handles the pool as usual.

/** Where memory-bound begins: the utilization ratio's own definition (docs/sql.md). */
const MEMORY_ABOVE = UTILIZATION_BOUNDS.memoryAbove;
/** KV cache usage at which a pool's cache is full enough to bind admission. */
const KV_FULL = 0.8;

export function detectMemoryBound(ctx: DetectContext, skipModels: ReadonlySet<string>): Candidate[] {
  const out: Candidate[] = [];
  const { tuning, fastWindowLabel, slo } = ctx;
  // A peer takes the moved share only with room in memory and in throughput.
  const room = roomUtilization(ctx.control, tuning);
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    if (pools.length < 2 || skipModels.has(model)) continue;
    for (const pool of pools) {
      const g = pool.fast;
      if (!g || g.requests < MIN_P95_SAMPLE || ctx.suspects.has(pool.pool)) continue;
      const ratio = g.utilizationRatio;
      const memory = g.memoryUtil;
      if (
        ratio === null ||
        memory === null ||
        classifyUtilizationRatio(ratio) !== 'memory' ||
        memory < KV_FULL
      )
        continue;
      const queueShare = readQueueShare(g);
      const pressed =
        (queueShare !== null && queueShare >= boundShare(tuning)) ||
        (g.preemptionRate ?? 0) > 0.01 ||
        (slo.ttft_ms !== undefined && g.ttftMs.p95 !== null && g.ttftMs.p95 > slo.ttft_ms);
      if (!pressed) continue;
      const peers = pools.filter((p) => {
        if (p.pool === pool.pool || ctx.suspects.has(p.pool) || isCircuitOpen(ctx, p.pool)) return false;
        const pm = p.fast?.memoryUtil ?? p.main?.memoryUtil ?? null;
        const u = readUtilizationNow(p, ctx.state.learning.get(p.pool));
        return pm !== null && pm <= room && (u === null || u <= room);
      });
      if (peers.length === 0) continue;
      const weights = readWeights(ctx, model, pools);
      const current = weights[pool.pool] ?? 0;
      // KV usage is load in memory: the move brings it back to the utilization pools are sized for.
      const moveShare = Math.min(0.5, (memory - ctx.control.target_utilization) / memory);
      const moved = current * moveShare;
      if (moved < MIN_WEIGHT_STEP) continue;
      const next: Record<string, number> = { ...weights, [pool.pool]: current - moved };
      for (const p of peers) next[p.pool] = (weights[p.pool] ?? 0) + moved / peers.length;
      const after = normalizeWeights(next);
      out.push({
        kind: 'shift_traffic',
        target: { model, pool: pool.pool },
        action: { weights: after },
        direction: 'decrease',
        reason: `Pool ${pool.pool} is memory-bound (KV cache ${Math.round(memory * 100)}% full, memory/compute ${round(ratio, 2)}); more of the same replicas would stay KV-limited, so move ${Math.round(moved * 100)}% of ${model}'s traffic to ${peers.map((p) => p.pool).join(', ')} with KV headroom.`,
        evidence: [
          evidence(`utilizationRatio{pool=${pool.pool}}`, ratio, MEMORY_ABOVE, fastWindowLabel),
          evidence(`memoryUtil{pool=${pool.pool}}`, memory, KV_FULL, fastWindowLabel),
          evidence(`queueShareOfTtft{pool=${pool.pool}}`, queueShare, boundShare(tuning), fastWindowLabel),
          ...peers.map((p) =>
            evidence(
              `memoryUtil{pool=${p.pool}}`,
              p.fast?.memoryUtil ?? p.main?.memoryUtil ?? null,
              room,
              fastWindowLabel,
            ),
          ),
        ],
        expectedImpact: {
          summary: `KV pressure and queueing on ${pool.pool} ease; the peers absorb the moved share without queueing.`,
          weight: { pool: pool.pool, from: round(current), to: round(current - moved) },
          memoryUtil: { from: round(memory), to: round(memory * (1 - moveShare)) },
          ...predictedGoodput(ctx, pools, after),
        },
        // It rests on the pool being memory-bound: its memory/compute ratio and its KV usage each past
        // their bound.
        confidence: confidenceOf(
          allOf(
            ratioZ(ratio, MEMORY_ABOVE, g.requests, 'above'),
            ratioZ(memory, KV_FULL, g.requests, 'above'),
          ),
          g.requests,
        ),
        scopePools: pools.map((p) => p.pool),
        cause: 'resource',
      });
      break;
    }
  }
  return out;
}
