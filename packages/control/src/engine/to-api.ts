import type { Recommendation } from '@governor/conventions';
import { nsToIso } from '../time.ts';
import { recommendationActionsOf } from './kind-action.ts';
import type { AuditDecision, AuditEntry, AuditEntryFields, DecisionDetails } from './audit-entry.ts';
import type { RecommendationRecord } from './control-types.ts';

export function toRecommendation(r: RecommendationRecord): Recommendation {
  return {
    ...recommendationActionsOf(r),
    id: r.id,
    target: r.target,
    reason: r.reason,
    evidence: r.evidence,
    expectedImpact: r.expectedImpact,
    confidence: r.confidence,
    state: r.state,
    policy: r.policy,
    createdAt: nsToIso(r.createdNs),
    updatedAt: nsToIso(r.updatedNs),
    appliedAt: r.appliedNs === null ? null : nsToIso(r.appliedNs),
    verifiedAt: r.verifiedNs === null ? null : nsToIso(r.verifiedNs),
    verification: r.verification,
    gate: r.gate,
    waits: r.waits,
    // A hold says why an open recommendation waits; once decided it waits for nothing.
    hold: r.state === 'proposed' || r.state === 'approved' ? r.hold : null,
  };
}

/** One row of GET /api/actions: `decision` discriminates, so `details` narrows with it. */
export type AuditView<D extends AuditDecision = AuditDecision> = DecisionDetails<D> & AuditViewFields;

/** The entry's fields with its times as RFC 3339: `at` (event time) and `recordedAt` (wall clock). */
type AuditViewFields = Omit<AuditEntryFields, 'atNs' | 'recordedAtMs'> & { at: string; recordedAt: string };

export function toAuditView<D extends AuditDecision>(e: AuditEntry<D>): AuditView<D> {
  return {
    id: e.id,
    at: nsToIso(e.atNs),
    recordedAt: new Date(e.recordedAtMs).toISOString(),
    recommendationId: e.recommendationId,
    actionId: e.actionId,
    kind: e.kind,
    target: e.target,
    decision: e.decision,
    actor: e.actor,
    reason: e.reason,
    result: e.result,
    details: e.details,
  };
}

/** JSON with sorted keys, for comparing actions. */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}
