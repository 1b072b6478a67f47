import type { RecommendationKind } from '../config/control-config.ts';
import type { ActionByKind } from './control-action.ts';
import type { ExpectedImpact, PredictedAfter } from './expected-impact.ts';

export const RECOMMENDATION_STATES = [
  'proposed',
  'approved',
  'applied',
  'rejected',
  'expired',
  'verified',
  'rolled_back',
] as const;
export type RecommendationState = (typeof RECOMMENDATION_STATES)[number];

export interface RecommendationTarget {
  pool?: string;
  model?: string;
  region?: string;
  tenant?: string;
}

export interface Evidence {
  signal: string;
  value: number | null;
  threshold: number | null;
  window: string;
}

/**
 * The kind with its action and, once applied, what the target looked like before it (a rollback
 * restores it): both have the kind's action shape.
 */
export type RecommendationActions = {
  [K in RecommendationKind]: { kind: K; action: ActionByKind[K]; previousAction?: ActionByKind[K] | null };
}[RecommendationKind];

export type Recommendation = RecommendationActions & RecommendationFields;

interface RecommendationFields {
  id: string;
  target: RecommendationTarget;
  reason: string;
  evidence: Evidence[];
  expectedImpact: ExpectedImpact;
  confidence: number;
  state: RecommendationState;
  policy: string | null;
  /** RFC 3339 event time of the tick that proposed it */
  createdAt: string;
  updatedAt: string;
  appliedAt?: string | null;
  verifiedAt?: string | null;
  /** Outcome of the check after control.verify_after_s: expected vs observed impact. */
  verification?: RecommendationVerification | null;
  /** Why the policy gate did (not) auto-apply it, e.g. "below min_confidence 0.8". */
  gate?: string | null;
  /**
   * Why no policy may auto-apply it whatever its confidence: it waits for a human (the objective does
   * not pay for it, or the peers it leans on have no room yet) or for the next tick (a first
   * sighting, until it persists); null or absent when a policy may.
   */
  waits?: string | null;
  /**
   * A guard holding it back at the last tick (e.g. `no_reversal_in_cooldown`), with why; null or
   * absent when none does. Holds are also recorded in the audit log as `held`.
   */
  hold?: RecommendationHold | null;
}

/**
 * The control loop's guards ("when it may change", apart from what it sizes): no reversal inside the
 * cooldown, no second step while the last one is landing, no asking again what a human rejected
 * within the recommendation TTL.
 */
export const HOLD_RULES = ['no_reversal_in_cooldown', 'last_action_landing', 'rejected_recently'] as const;
export type HoldRule = (typeof HOLD_RULES)[number];

export interface RecommendationHold {
  rule: HoldRule;
  why: string;
}

export interface RecommendationVerification {
  /** RFC 3339 event time of the check. */
  at: string;
  verdict: 'verified' | 'rolled_back';
  summary: string;
  before: Record<string, number | null>;
  after: Record<string, number | null>;
  /** What the action predicted for after it (the `to` of each `{from, to}` in its expectedImpact). */
  predicted?: PredictedAfter;
}
