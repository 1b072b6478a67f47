import type { PoolModel, PoolPrediction } from '../model/predict-pool.ts';
import { reaches, requirementOf } from './attainment.ts';

// How much a pool can be given: the part of "one allocator of each model's traffic over its pools"
// that says whether a pool carries more load within the objective. The pool's model (its own recent
// requests replayed, predict-pool.ts) is asked at the load it would carry, on the replicas it serves
// with; it carries it when the prediction surely reaches what the objective requires of its tasks
// (attainment.ts). A pool already short of it carries nothing more.

export interface CarryOutlook {
  carries: boolean;
  /** The share of its tasks it must reach. */
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
  const required = requirementOf(model, attainmentTarget);
  const prediction = model.predict(replicas, Math.max(1, loadFactor));
  return { carries: reaches(prediction, required, 'surely'), required: required.share, prediction };
}
