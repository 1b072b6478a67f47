import type { PoolModel, PoolPrediction } from '../model/predict-pool.ts';
import { reaches, requirementOf } from './attainment.ts';

// Scale = the cheapest feasible replica count. Feasible: the predicted share of tasks within the SLO
// reaches what the objective requires (attainment.ts: the target, or what the tasks attain at all when
// less). The model's uncertainty decides how sure "feasible" must be, and that band is the hysteresis:
// a pool is scaled up only when even the optimistic prediction says its count is short, and in only
// to a count whose pessimistic prediction still holds. Between the two, it stays.

export interface SizingGoal {
  /** Share of requests within the SLO the fleet must reach (the objective's constraint). */
  attainmentTarget: number;
  /** Load to size for, relative to the observed one (a forecast over the lead time; ≥ 1 on a rise). */
  loadFactor: number;
  floor: number;
  ceiling: number;
}

export interface Sizing {
  /** The share of tasks a feasible count must reach: the target, or what they attain unqueued when less. */
  required: number;
  /** Fewest replicas whose pessimistic prediction (share − uncertainty) reaches `required`. */
  surely: number;
  /** Fewest replicas whose optimistic prediction (share + uncertainty) reaches it. */
  plausibly: number;
  /** What the pool should have: `current` when it lies in [plausibly, surely], else the nearer bound. */
  desired: number;
  before: PoolPrediction;
  after: PoolPrediction;
  /** No count up to the ceiling is feasible even optimistically: more replicas alone will not do. */
  infeasible: boolean;
}

export function sizePool(model: PoolModel, current: number, goal: SizingGoal): Sizing {
  const floor = Math.max(1, Math.floor(goal.floor));
  const ceiling = Math.max(
    floor,
    Number.isFinite(goal.ceiling) ? Math.floor(goal.ceiling) : floorCap(current),
  );
  const f = goal.loadFactor > 0 ? goal.loadFactor : 1;
  // What the tasks allow at all (no queueing) caps the target; the load does not move it, so more
  // load never asks for fewer replicas. A target no count up to the ceiling reaches sizes to the ceiling.
  const required = requirementOf(model, goal.attainmentTarget);
  const surely = fewest(floor, ceiling, (n) => reaches(model.predict(n, f), required, 'surely'));
  const plausibly = fewest(floor, ceiling, (n) => reaches(model.predict(n, f), required, 'plausibly'));
  const lowest = plausibly ?? ceiling;
  const highest = Math.max(lowest, surely ?? ceiling);
  const desired = Math.min(highest, Math.max(lowest, Math.min(ceiling, Math.max(floor, current))));
  return {
    required: required.share,
    surely: highest,
    plausibly: lowest,
    desired,
    before: model.predict(Math.max(1, current), f),
    after: model.predict(desired, f),
    infeasible: plausibly === null,
  };
}

/** Without a configured ceiling: room to double, plenty for one step. */
function floorCap(current: number): number {
  return Math.max(2, 2 * Math.ceil(current));
}

/** The smallest n in [lo, hi] with ok(n), for ok monotone (false … false true … true); null if none. */
function fewest(lo: number, hi: number, ok: (n: number) => boolean): number | null {
  if (!ok(hi)) return null;
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    if (ok(mid)) b = mid;
    else a = mid + 1;
  }
  return a;
}
