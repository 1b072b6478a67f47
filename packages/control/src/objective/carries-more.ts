import type { PoolModel, PoolPrediction } from '../model/predict-pool.ts';

// How much a pool can be given: the part of "one allocator of each model's traffic over its pools"
// that says whether a pool carries more load within the objective. The pool's model (its own recent
// requests replayed, predict-pool.ts) is asked at the load it would carry, on the replicas it serves
// with; it carries it when even the pessimistic prediction (share within the SLO less its
// uncertainty) reaches what the pool must reach: the attainment target, or what its requests attain
// with no queueing at all when that is less. In that second case the requirement and the prediction
// come from the same requests, so the sample's uncertainty is in both and cancels: the point
// prediction must reach it (no request pushed past the SLO by queueing). A pool already short of it
// carries nothing more.

export interface CarryOutlook {
  carries: boolean;
  /** The share it must reach. */
  required: number;
  prediction: PoolPrediction;
}

export function carriesMore(
  model: PoolModel,
  replicas: number,
  /** The load it would carry over the load its requests were measured at (≥ 1). */
  loadFactor: number,
  attainmentTarget: number,
): CarryOutlook {
  const required = Math.min(attainmentTarget, model.attainableShare);
  const prediction = model.predict(replicas, Math.max(1, loadFactor));
  const doubt = attainmentTarget <= model.attainableShare ? prediction.uncertainty : 0;
  return {
    carries: prediction.withinSloShare - doubt >= required - 1e-12,
    required,
    prediction,
  };
}
