import type { RecommendationKind } from '../config/control-config.ts';
import type { RecommendationTarget } from './recommendation.ts';

// What an actuator receives (the simulator's actuator endpoint, a generic webhook, and the
// `actions` list of POST /api/control/evaluate for lockstep runs). Kind-specific `action` shapes:
//   scale            { from: number, to: number }                       target.pool
//   shift_traffic    { weights: { [pool]: number } }   (weights sum to 1; pools serving target.model)
//   circuit_break    { open: boolean, durationS?: number }             target.pool
//   shed_load        { minPriority: number }  admit new tasks with priority >= minPriority;
//                    in-flight workflow steps are always admitted; { minPriority: null } lifts it
//   retry_budget     { maxRetryRatio: number }  retries allowed per first attempt (0–1); null lifts it
//   downgrade_model  { fromModel: string, toModel: string, fraction: number }  share of new tasks moved

export type ScaleAction = {
  from: number;
  to: number;
};
export type ShiftTrafficAction = {
  weights: Record<string, number>;
};
export type CircuitBreakAction = {
  open: boolean;
  durationS?: number;
};
export type ShedLoadAction = {
  minPriority: number | null;
};
export type RetryBudgetAction = {
  maxRetryRatio: number | null;
};
export type DowngradeModelAction = {
  fromModel: string;
  toModel: string;
  fraction: number;
};

/** The action shape of each recommendation kind (a rollback's action has its kind's shape too). */
export interface ActionByKind {
  scale: ScaleAction;
  shift_traffic: ShiftTrafficAction;
  circuit_break: CircuitBreakAction;
  shed_load: ShedLoadAction;
  retry_budget: RetryBudgetAction;
  downgrade_model: DowngradeModelAction;
}

/** A kind with its action: `kind` discriminates, so `action` narrows with it. */
export type KindAction = {
  [K in RecommendationKind]: { kind: K; action: ActionByKind[K] };
}[RecommendationKind];

export type ControlAction = KindAction & {
  /** Unique per action; actuators use it as the idempotency key (applied at most once). */
  id: string;
  recommendationId: string;
  /** `apply` carries out a recommendation; `rollback` undoes one (action holds the previous state). */
  type: 'apply' | 'rollback';
  target: RecommendationTarget;
  /** RFC 3339 event time at which the action takes effect. */
  at: string;
};

/** Response of POST /api/control/evaluate. */
export interface EvaluateResponse {
  at: string;
  recommendations: import('./recommendation.ts').Recommendation[];
  /** Actions decided in this tick (auto-applied or rolled back), for lockstep callers to carry out. */
  actions: ControlAction[];
}
