import type { AlertEventSource, ControlAction, Recommendation } from '@governor/conventions';
import type { Labels } from './labels.ts';
import { msToNs } from './time.ts';

/** A recommendation or control-action event offered to event rules. */
export interface AlertSourceEvent {
  source: AlertEventSource;
  /** Event time (the control tick's time, not the wall clock). */
  atNs: bigint;
  labels: Labels;
  summary: string;
}

function rfc3339ToNs(text: string): bigint {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new Error(`invalid RFC 3339 time "${text}"`);
  return msToNs(ms);
}

function targetLabels(target: Recommendation['target']): Labels {
  const labels: Labels = {};
  for (const key of ['pool', 'model', 'region', 'tenant'] as const) {
    const value = target[key];
    if (value) labels[key] = value;
  }
  return labels;
}

/** Labels: kind, state, policy, pool/model/region/tenant, recommendation_id; at its last update time. */
export function recommendationToAlertEvent(recommendation: Recommendation): AlertSourceEvent {
  return {
    source: 'recommendation',
    atNs: rfc3339ToNs(recommendation.updatedAt),
    labels: {
      kind: recommendation.kind,
      state: recommendation.state,
      ...(recommendation.policy ? { policy: recommendation.policy } : {}),
      ...targetLabels(recommendation.target),
      recommendation_id: recommendation.id,
    },
    summary: `${recommendation.kind} recommendation ${recommendation.state}: ${recommendation.reason}`,
  };
}

/** Labels: kind, type (apply | rollback), pool/model/region/tenant, recommendation_id, action_id. */
export function controlActionToAlertEvent(action: ControlAction): AlertSourceEvent {
  return {
    source: 'action',
    atNs: rfc3339ToNs(action.at),
    labels: {
      kind: action.kind,
      type: action.type,
      ...targetLabels(action.target),
      recommendation_id: action.recommendationId,
      action_id: action.id,
    },
    summary: `${action.type === 'rollback' ? 'rolled back' : 'applied'} ${action.kind} ${JSON.stringify(action.action)}`,
  };
}
