import type { RecommendationKind, RecommendationState } from '@governor/conventions';
import type { AuditEntry } from '../engine/audit-entry.ts';
import type { Direction, KindActions, RecommendationRecord } from '../engine/control-types.ts';
import { readAuditDetails } from './read-audit-details.ts';

// The columns of the recommendation and audit tables, as both repositories (DuckDB and PostgreSQL)
// write and read them: event times as BIGINT ns, JSON columns as text holding the API shapes.

export const RECOMMENDATION_COLUMNS = [
  'id',
  'kind',
  'target',
  'target_key',
  'action',
  'direction',
  'reason',
  'evidence',
  'expected_impact',
  'confidence',
  'state',
  'policy',
  'gate',
  'scope_pools',
  'created_ns',
  'updated_ns',
  'applied_ns',
  'verified_ns',
  'previous_action',
  'baseline',
  'action_id',
  'verification',
  'cause',
  'hold',
  'waits',
] as const;

export const AUDIT_COLUMNS = [
  'seq',
  'id',
  'at_ns',
  'recorded_at_ms',
  'recommendation_id',
  'action_id',
  'kind',
  'target',
  'decision',
  'actor',
  'reason',
  'result',
  'details',
] as const;

export type Row = Record<string, unknown>;
/** A column value as both databases' drivers take it. */
export type SqlValue = string | number | bigint | boolean | null;

/** A record as the values of RECOMMENDATION_COLUMNS. */
export function recommendationRow(
  r: RecommendationRecord,
): Record<(typeof RECOMMENDATION_COLUMNS)[number], SqlValue> {
  return {
    id: r.id,
    kind: r.kind,
    target: JSON.stringify(r.target),
    target_key: r.targetKey,
    action: JSON.stringify(r.action),
    direction: r.direction,
    reason: r.reason,
    evidence: JSON.stringify(r.evidence),
    expected_impact: JSON.stringify(r.expectedImpact),
    confidence: r.confidence,
    state: r.state,
    policy: r.policy,
    gate: r.gate,
    scope_pools: JSON.stringify(r.scopePools),
    created_ns: r.createdNs,
    updated_ns: r.updatedNs,
    applied_ns: r.appliedNs,
    verified_ns: r.verifiedNs,
    previous_action: r.previousAction === null ? null : JSON.stringify(r.previousAction),
    baseline: r.baseline === null ? null : JSON.stringify(r.baseline),
    action_id: r.actionId,
    verification: r.verification === null ? null : JSON.stringify(r.verification),
    cause: r.cause,
    hold: r.hold === null ? null : JSON.stringify(r.hold),
    waits: r.waits,
  };
}

/** An audit entry as the values of AUDIT_COLUMNS. */
export function auditRow(
  e: AuditEntry,
  seq: number | null,
): Record<(typeof AUDIT_COLUMNS)[number], SqlValue> {
  return {
    seq,
    id: e.id,
    at_ns: e.atNs,
    recorded_at_ms: e.recordedAtMs,
    recommendation_id: e.recommendationId,
    action_id: e.actionId,
    kind: e.kind,
    target: e.target === null ? null : JSON.stringify(e.target),
    decision: e.decision,
    actor: e.actor,
    reason: e.reason,
    result: e.result,
    details: JSON.stringify(e.details),
  };
}

export function parseJson(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return JSON.parse(value);
  return value;
}

export function toBigint(value: unknown): bigint | null {
  if (value === null || value === undefined) return null;
  return BigInt(value as string | number);
}

export function fromRow(row: Row): RecommendationRecord {
  // kind, action and previous_action were written together from one record (toRow).
  const actions = {
    kind: row.kind as RecommendationKind,
    action: parseJson(row.action),
    previousAction: parseJson(row.previous_action),
  } as KindActions;
  return {
    ...actions,
    id: String(row.id),
    target: parseJson(row.target) as RecommendationRecord['target'],
    targetKey: String(row.target_key),
    direction: row.direction as Direction,
    reason: String(row.reason),
    evidence: parseJson(row.evidence) as RecommendationRecord['evidence'],
    expectedImpact: parseJson(row.expected_impact) as RecommendationRecord['expectedImpact'],
    confidence: Number(row.confidence),
    state: row.state as RecommendationState,
    policy: row.policy === null ? null : String(row.policy),
    gate: row.gate === null ? null : String(row.gate),
    scopePools: parseJson(row.scope_pools) as string[],
    createdNs: toBigint(row.created_ns)!,
    updatedNs: toBigint(row.updated_ns)!,
    appliedNs: toBigint(row.applied_ns),
    verifiedNs: toBigint(row.verified_ns),
    baseline: parseJson(row.baseline) as RecommendationRecord['baseline'],
    actionId: row.action_id === null ? null : String(row.action_id),
    verification: parseJson(row.verification) as RecommendationRecord['verification'],
    cause: (row.cause ?? null) as RecommendationRecord['cause'],
    hold: (parseJson(row.hold) ?? null) as RecommendationRecord['hold'],
    waits: typeof row.waits === 'string' ? row.waits : null,
  };
}

export function fromAuditRow(row: Row): AuditEntry {
  const id = String(row.id);
  const decided = readAuditDetails(row.decision, parseJson(row.details));
  // Every row is written from an AuditEntry (appendAudit): one that does not read back as one was
  // not written by Governor.
  if (decided === null)
    throw new Error(`audit entry ${id}: details that no ${String(row.decision)} decision writes`);
  return {
    ...decided,
    id,
    atNs: toBigint(row.at_ns)!,
    recordedAtMs: Number(row.recorded_at_ms),
    recommendationId: row.recommendation_id === null ? null : String(row.recommendation_id),
    actionId: row.action_id === null ? null : String(row.action_id),
    kind: (row.kind ?? null) as RecommendationKind | null,
    target: parseJson(row.target) as AuditEntry['target'],
    actor: String(row.actor),
    reason: String(row.reason),
    result: String(row.result),
  };
}
