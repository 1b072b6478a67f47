import type { AlertSourceEvent } from '../alert-event.ts';
import type { ConditionObservation } from '../alert-instance.ts';
import { fingerprintLabels, pickLabels } from '../labels.ts';
import type { CompiledEventRule } from './compiled-rule.ts';
import { renderAnnotations } from './render-annotations.ts';

export function matchesEventRule(rule: CompiledEventRule, event: AlertSourceEvent): boolean {
  if (rule.source !== event.source) return false;
  return Object.entries(rule.match).every(([name, accepted]) => {
    const value = event.labels[name];
    return value !== undefined && accepted.includes(value);
  });
}

/** The alert an event fires: identity is the rule plus the event labels named in `by`. */
export function observeEvent(rule: CompiledEventRule, event: AlertSourceEvent): ConditionObservation {
  const identity = { alertname: rule.name, ...pickLabels(event.labels, rule.by) };
  const labels = { ...rule.labels, severity: rule.severity, ...identity };
  // Templates see every label of the event, not only the identifying ones.
  const annotations = renderAnnotations({ summary: event.summary, ...rule.annotations }, event.labels, {});
  return {
    fingerprint: fingerprintLabels(identity),
    rule: rule.name,
    ruleType: 'event',
    labels,
    annotations,
    receivers: rule.receivers,
    value: null,
    forMs: 0,
  };
}
