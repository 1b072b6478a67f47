import type { PoolModel, PoolPrediction } from '../model/predict-pool.ts';

// The objective's constraint (DESIGN §6): the share of tasks within the SLO — goodput, where a task is
// within it only when every request of it is — reaches the attainment target. When a pool's own tasks
// make the target unreachable (a request whose prompt or output misses the SLO on an idle replica
// loses its task whatever the replica count), the requirement is what its tasks attain with no
// queueing at all: replicas are not bought for tasks no replica count brings within the SLO, and a
// pool none of whose tasks can be within it is held to nothing but finishing them (its cost decides).
//
// Tasks must also finish: the objective counts successful tasks per dollar, failures included, so no
// replica count may push a request past the deadline its client gave it (where the client says,
// RequestArrival.deadlineMs) when it would end within it unqueued: the predicted share of tasks that
// finish must reach the share that finish with no queueing at all. It is the same sample on both
// sides, so the point prediction must reach it (see below). It binds where the SLO does not: where no
// task can be within the SLO, a count is still held to finishing the tasks it can.
//
// How sure "reaches" must be: the prediction's standard error is the band inside which two counts
// cannot be told apart, so a count surely reaches the target when its share less that band does. When
// the requirement is the attainable share, requirement and prediction come from the same tasks, so
// the sample's uncertainty is in both and cancels: the point prediction must reach it (no task pushed
// past the SLO by queueing).

export interface Requirement {
  /** The share of tasks within the SLO that must be reached. */
  share: number;
  /** It is what the tasks attain unqueued (less than the target): the same sample on both sides. */
  attainableBinds: boolean;
  /** The share of tasks that must finish within their clients' deadlines: all that do unqueued. */
  finishShare: number;
}

export function requirementOf(model: PoolModel, attainmentTarget: number): Requirement {
  const attainable = model.attainableTaskShare;
  const finishShare = model.attainableTaskFinishShare;
  return attainmentTarget <= attainable
    ? { share: attainmentTarget, attainableBinds: false, finishShare }
    : { share: attainable, attainableBinds: true, finishShare };
}

/** Whether the prediction reaches the requirement for sure (`surely`) or at best (`plausibly`). */
export function reaches(p: PoolPrediction, r: Requirement, how: 'surely' | 'plausibly'): boolean {
  const band = r.attainableBinds ? 0 : p.taskUncertainty;
  const share = how === 'surely' ? p.taskWithinSloShare - band : p.taskWithinSloShare + band;
  return share >= r.share - 1e-12 && p.taskFinishShare >= r.finishShare - 1e-12;
}
