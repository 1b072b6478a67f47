import type { KindAction, RecommendationActions } from '@governor/conventions';
import type { RecommendationRecord } from './control-types.ts';

// A recommendation's kind and action travel together (KindAction): these are the few places where
// one is taken apart from a record or put back into it, each checking that the kinds agree.

/** The kind and action of `source` alone (a candidate or a record carries many more fields). */
export function kindActionOf(source: KindAction): KindAction {
  return { kind: source.kind, action: source.action } as KindAction;
}

/** Replaces `rec`'s action with `step`'s, which must be of the same kind. */
export function setAction(rec: RecommendationRecord, step: KindAction): void {
  assertSameKind(rec, step);
  (rec as { action: KindAction['action'] }).action = step.action;
}

/** Records what a rollback of `rec` restores: `step`, of the same kind. */
export function setPreviousAction(rec: RecommendationRecord, step: KindAction): void {
  assertSameKind(rec, step);
  (rec as { previousAction: KindAction['action'] | null }).previousAction = step.action;
}

/** The state a rollback of `rec` restores, once recorded (when it was applied). */
export function previousOf(rec: RecommendationActions): KindAction | null {
  return rec.previousAction == null ? null : ({ kind: rec.kind, action: rec.previousAction } as KindAction);
}

function assertSameKind(rec: RecommendationRecord, step: KindAction): void {
  if (step.kind !== rec.kind)
    throw new Error(`a ${step.kind} action cannot replace the action of a ${rec.kind} recommendation`);
}

/** The kind, action and previous action of `rec`, as the API shows them. */
export function recommendationActionsOf(rec: RecommendationRecord): RecommendationActions {
  return { kind: rec.kind, action: rec.action, previousAction: rec.previousAction } as RecommendationActions;
}
