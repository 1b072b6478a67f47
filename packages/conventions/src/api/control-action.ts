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

export interface ScaleAction {
  from: number;
  to: number;
}
export interface ShiftTrafficAction {
  weights: Record<string, number>;
}
export interface CircuitBreakAction {
  open: boolean;
  durationS?: number;
}
export interface ShedLoadAction {
  minPriority: number | null;
}
export interface RetryBudgetAction {
  maxRetryRatio: number | null;
}
export interface DowngradeModelAction {
  fromModel: string;
  toModel: string;
  fraction: number;
}

export interface ControlAction {
  /** Unique per action; actuators use it as the idempotency key (applied at most once). */
  id: string;
  recommendationId: string;
  /** `apply` carries out a recommendation; `rollback` undoes one (action holds the previous state). */
  type: 'apply' | 'rollback';
  kind: RecommendationKind;
  target: RecommendationTarget;
  action: Record<string, unknown>;
  /** RFC 3339 event time at which the action takes effect. */
  at: string;
}

/** Response of POST /api/control/evaluate. */
export interface EvaluateResponse {
  at: string;
  recommendations: import('./recommendation.ts').Recommendation[];
  /** Actions decided in this tick (auto-applied or rolled back), for lockstep callers to carry out. */
  actions: ControlAction[];
}
