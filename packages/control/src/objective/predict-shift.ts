import type { PoolModel } from '../model/predict-pool.ts';

// What moving a model's traffic between its pools does to the share of its tasks within the SLO (its
// goodput): the prediction a shift carries (`expectedImpact.withinSloShare`), which verification
// shows beside what it measured. Each pool keeps the goodput it has, changed by what its model says
// its new load does on the replicas it serves with — anchored as the model is: at today's load it
// predicts what was measured, so the change is 0. The model's goodput is the pools' weighted by the
// requests each serves.

/** Relative change of a pool's load below which it is its load now. */
const LOAD_UNCHANGED = 1e-9;

export interface ShiftPool {
  pool: string;
  /** Requests per second it serves now. */
  ratePerS: number;
  /** Share of its tasks within the SLO now; null when not measured. */
  goodput: number | null;
  /** The replicas it serves with. */
  replicas: number;
  /** Its pool model; null where the model cannot judge it (read-pool-model.ts). */
  model: PoolModel | null;
}

export interface ShiftPrediction {
  from: number;
  to: number;
}

/**
 * The model's goodput now and after its traffic is spread by `weights` (normalized, per pool). Null
 * where there is no prediction: a pool that gains traffic without a model of its own (or without
 * traffic now to anchor one), a pool with a share and no measured goodput, or no traffic at all. A
 * pool that loses traffic without a model keeps its goodput: less load can only raise it, so the
 * prediction then errs toward a smaller gain.
 */
export function predictShiftGoodput(
  pools: readonly ShiftPool[],
  weights: Readonly<Record<string, number>>,
): ShiftPrediction | null {
  const total = pools.reduce((sum, p) => sum + Math.max(0, p.ratePerS), 0);
  if (!(total > 0)) return null;
  let before = 0;
  let after = 0;
  for (const p of pools) {
    const rate = Math.max(0, p.ratePerS);
    const nextRate = total * (weights[p.pool] ?? 0);
    if (rate === 0 && nextRate === 0) continue;
    if (p.goodput === null) return null;
    before += rate * p.goodput;
    if (nextRate === 0) continue;
    // A share that stays where it is (to rounding: weights are renormalized in floating point) keeps
    // its load; replaying it a few ulps denser could flip a request sitting at the SLO, and reading
    // it as a gain would drop the prediction for a pool without a model.
    const unchanged = Math.abs(nextRate - rate) <= LOAD_UNCHANGED * rate;
    if (!unchanged && nextRate > rate && (p.model === null || rate === 0)) return null;
    const factor = unchanged ? 1 : nextRate / rate;
    const change =
      p.model === null || factor === 1
        ? 0
        : p.model.predict(p.replicas, factor).taskWithinSloShare -
          p.model.predict(p.replicas, 1).taskWithinSloShare;
    after += nextRate * Math.min(1, Math.max(0, p.goodput + change));
  }
  return { from: before / total, to: after / total };
}
