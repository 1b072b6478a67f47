import { boundShare, clearlyWithinSloShare } from '../engine/control-tuning.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, isCircuitOpen, readMemory } from './detect-context.ts';
import { readScaleReadiness } from './scale-readiness.ts';
import { estimateUtilization, readLoad } from './pool-signals.ts';
import { allOf, confidenceOf, ratioZ } from '../objective/confidence.ts';

/** How hard a model's serving pools are pushed, and whether more capacity is on its way. */
export interface ModelPressure {
  model: string;
  pools: PoolView[];
  ttftP95Ms: number | null;
  queueShare: number | null;
  /** Load over what the serving pools sustain (request-weighted over pools whose capacity is known). */
  utilization: number | null;
  /** TTFT past the SLO and mostly queueing. */
  overloaded: boolean;
  /** Comfortably inside the SLO with little queueing. */
  relaxed: boolean;
  /** A scale-up is still starting replicas on one of the pools. */
  capacityPending: boolean;
  /** Every serving pool is at its max_replicas. */
  atCeiling: boolean;
  /** Error rate of the requests that reached the model's pools (gateway rejections excluded). */
  poolErrorRate: number | null;
  requests: number;
}

export function readModelPressure(
  ctx: DetectContext,
  model: string,
  all: readonly PoolView[],
): ModelPressure {
  const { tuning, slo } = ctx;
  const pools = all.filter((p) => p.model === model && !isCircuitOpen(ctx, p.pool));
  let ttft: number | null = null;
  let shareSum = 0;
  let shareWeight = 0;
  let boundRequests = 0;
  let utilSum = 0;
  let utilWeight = 0;
  let requests = 0;
  let errors = 0;
  let errorWeight = 0;
  for (const p of pools) {
    const g = p.fast;
    if (!g || g.requests === 0) continue;
    requests += g.requests;
    // A pool faulty against its peers fails because of its fault, not the load: its errors are
    // the outlier policy's (shift, breaker), and shedding tasks would not stop them.
    if (g.errorRate !== null && !ctx.suspects.has(p.pool)) {
      errors += g.errorRate * g.requests;
      errorWeight += g.requests;
    }
    if (g.ttftMs.p95 !== null) ttft = ttft === null ? g.ttftMs.p95 : Math.max(ttft, g.ttftMs.p95);
    const load = readLoad(p, ctx.state.learning.get(p.pool), tuning);
    if (load.loadBound) boundRequests += g.requests;
    if (load.queueShare !== null) {
      shareSum += load.queueShare * g.requests;
      shareWeight += g.requests;
    }
    const replicas = p.replicas ?? ctx.state.actuated.replicas[p.pool];
    if (replicas) {
      const u = estimateUtilization(
        p,
        Math.max(p.fastRatePerS, p.mainRatePerS),
        replicas,
        ctx.state.learning.get(p.pool),
      );
      // KV usage alone bounds memory, not throughput: only a known capacity says how loaded a model is.
      if (u.value !== null && u.capacityKnown) {
        utilSum += u.value * g.requests;
        utilWeight += g.requests;
      }
    }
  }
  const queueShare = shareWeight > 0 ? shareSum / shareWeight : null;
  const sloMs = slo.ttft_ms ?? null;
  // Most of the model's traffic lands on load-bound pools.
  const loadBound = requests > 0 && boundRequests / requests >= 0.5;
  const overloaded = loadBound && (sloMs === null ? true : ttft !== null && ttft > sloMs);
  const relaxed =
    boundRequests === 0 &&
    (queueShare ?? 0) < boundShare(tuning) / 2 &&
    (sloMs === null || ttft === null || ttft <= clearlyWithinSloShare(tuning) * sloMs);
  const capacityPending = pools.some((p) => {
    const memory = readMemory(ctx, 'scale', { pool: p.pool });
    return memory?.direction === 'increase' && !readScaleReadiness(ctx, p).settled;
  });
  const atCeiling =
    pools.length > 0 && pools.every((p) => p.maxReplicas !== null && (p.replicas ?? 0) >= p.maxReplicas);
  return {
    model,
    pools,
    ttftP95Ms: ttft,
    queueShare,
    utilization: utilWeight > 0 ? utilSum / utilWeight : null,
    overloaded,
    relaxed,
    capacityPending,
    atCeiling,
    poolErrorRate: errorWeight > 0 ? errors / errorWeight : null,
    requests,
  };
}

/**
 * How sure the model's pools are to stay within the SLO with load given back to them (tasks moved
 * back from a smaller model, a shed class readmitted): under the target utilization with it, where
 * utilization is known (`projected`), and TTFT inside the SLO — both must hold (objective/confidence.ts).
 */
export function confidenceOfRoom(
  pressure: ModelPressure,
  projected: number | null,
  targetUtilization: number,
  sloMs: number | undefined,
): number {
  const n = pressure.requests;
  return confidenceOf(
    allOf(
      projected !== null ? ratioZ(projected, targetUtilization, n, 'below') : Number.POSITIVE_INFINITY,
      sloMs !== undefined && pressure.ttftP95Ms !== null
        ? ratioZ(pressure.ttftP95Ms, sloMs, n, 'below')
        : Number.POSITIVE_INFINITY,
    ),
    n,
  );
}
