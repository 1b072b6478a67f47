import { randomUUID } from 'node:crypto';
import type { ControlAction } from '@governor/conventions';
import type { AuditEntry, DecisionDetails } from './audit-entry.ts';
import type { RecommendationRecord } from './control-types.ts';
import { toRecommendation } from './to-api.ts';

// What one tick (or one human decision) changes, collected before anything is written: the records
// it touched, its audit entries, the actions to deliver and the events to publish. The engine saves
// and publishes them together once the tick has run (persistence.ts).

export interface ControlEvent {
  type:
    | 'recommendation.created'
    | 'recommendation.updated'
    | 'control.action'
    | 'control.delivery'
    | 'control.tick';
  data: unknown;
}

export interface TickOutput {
  touched: Map<string, RecommendationRecord>;
  audit: AuditEntry[];
  actions: ControlAction[];
  events: ControlEvent[];
}

export function createTickOutput(): TickOutput {
  return { touched: new Map(), audit: [], actions: [], events: [] };
}

/** What an audit entry is about: a recommendation, or a candidate that never became one (a hold). */
export type AuditSubject = Pick<RecommendationRecord, 'kind' | 'target' | 'actionId'> & { id: string | null };

/** One audit entry for `rec` (or for no recommendation), recorded at event time `atNs`. */
export function recordAudit(
  out: TickOutput,
  now: () => number,
  atNs: bigint,
  decided: DecisionDetails,
  actor: string,
  rec: AuditSubject | null,
  reason: string,
  result: string,
  actionId: string | null = null,
): void {
  const entry: AuditEntry = {
    ...decided,
    id: randomUUID(),
    atNs,
    recordedAtMs: now(),
    recommendationId: rec?.id ?? null,
    actionId: actionId ?? rec?.actionId ?? null,
    kind: rec?.kind ?? null,
    target: rec?.target ?? null,
    actor,
    reason,
    result,
  };
  out.audit.push(entry);
}

/** Marks `rec` as changed this tick, with the event that tells subscribers. */
export function touchRecord(out: TickOutput, rec: RecommendationRecord, created = false): void {
  out.touched.set(rec.id, rec);
  out.events.push({
    type: created ? 'recommendation.created' : 'recommendation.updated',
    data: toRecommendation(rec),
  });
}
