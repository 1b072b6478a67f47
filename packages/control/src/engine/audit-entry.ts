import type {
  ExpectedImpact,
  KindAction,
  RecommendationKind,
  RecommendationTarget,
} from '@governor/conventions';
import type { Direction, ScopeMetrics } from './control-types.ts';

// The audit log (GET /api/actions): one entry per decision or action, whose `details` have the shape
// its decision names (AuditDetailsByDecision), as a recommendation's action has its kind's.

const AUDIT_DECISIONS = [
  'proposed',
  'refreshed',
  'auto_applied',
  'dry_run',
  'approved',
  'rejected',
  'applied',
  'expired',
  'superseded',
  'held',
  'verified',
  'rolled_back',
  'delivered',
  'delivery_failed',
  'policies_updated',
] as const;
export type AuditDecision = (typeof AUDIT_DECISIONS)[number];

export function isAuditDecision(value: unknown): value is AuditDecision {
  return (AUDIT_DECISIONS as readonly unknown[]).includes(value);
}

/** An action of the entry's kind (the entry carries its kind beside the details). */
type AuditedAction = KindAction['action'];

/** Nothing beyond the entry's reason and result. */
type NoDetails = Record<string, never>;

/** The scope's metrics when the action was applied and over the control window since. */
type ObservedDetails = { before: ScopeMetrics; after: ScopeMetrics };

type AppliedDetails = { action: AuditedAction; previousAction: AuditedAction | null };

type DeliveryDetails = { attempts: number; httpStatus: number | null; error: string | null };

/** What each decision records in `details`. */
export interface AuditDetailsByDecision {
  /** `gate` is absent when the policy gate auto-applied it in the same tick. */
  proposed: { confidence: number; gate?: string };
  /** The action changed as the evidence moved. */
  refreshed: { action: AuditedAction };
  auto_applied: AppliedDetails;
  /** The action the policy would have applied (after its max_step). */
  dry_run: { action: AuditedAction };
  approved: NoDetails;
  rejected: NoDetails;
  applied: AppliedDetails;
  /**
   * Nothing when left undecided past the TTL; what verification saw when it failed and what the
   * action replaced was not recorded (nothing to roll back to).
   */
  expired: NoDetails | ObservedDetails;
  superseded: NoDetails;
  /** The candidate a guard held back. */
  held: { action: AuditedAction; direction: Direction; confidence: number };
  verified: ObservedDetails & { expectedImpact: ExpectedImpact };
  /** `rollback`: the action that restores what the rolled-back one replaced. */
  rolled_back: ObservedDetails & { rollback: AuditedAction };
  delivered: DeliveryDetails;
  delivery_failed: DeliveryDetails;
  /** The names of the policies set. */
  policies_updated: { policies: string[] };
}

/** A decision with its details: `decision` discriminates, so `details` narrows with it. */
export type DecisionDetails<D extends AuditDecision = AuditDecision> = {
  [K in D]: { decision: K; details: AuditDetailsByDecision[K] };
}[D];

export type AuditEntry<D extends AuditDecision = AuditDecision> = DecisionDetails<D> & AuditEntryFields;

export interface AuditEntryFields {
  id: string;
  /** Event time (ns) of the tick or request that made the decision. */
  atNs: bigint;
  /** Wall-clock time (ms) it was recorded. */
  recordedAtMs: number;
  recommendationId: string | null;
  actionId: string | null;
  kind: RecommendationKind | null;
  target: RecommendationTarget | null;
  /** `policy:<name>`, `user:<name>`, `engine` or `actuator:<name>`. */
  actor: string;
  reason: string;
  result: string;
}
