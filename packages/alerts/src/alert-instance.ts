import type { Labels } from './labels.ts';

export const ALERT_STATES = ['pending', 'firing', 'resolved'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** One episode of an alert: from becoming pending to resolving. Fingerprints repeat across episodes. */
export interface AlertInstance {
  id: string;
  fingerprint: string;
  rule: string;
  ruleType: 'threshold' | 'slo_burn_rate' | 'event';
  state: AlertState;
  labels: Labels;
  annotations: Record<string, string>;
  receivers: string[];
  value: number | null;
  /** When the condition first held (became pending). */
  activeAtNs: bigint;
  /** When it fired; null while pending. */
  startsAtNs: bigint | null;
  endsAtNs: bigint | null;
  /** Last evaluation at which the condition held, or the last matching event. */
  lastSeenNs: bigint;
}

export type AlertChange = 'pending' | 'firing' | 'resolved' | 'dropped';

export interface AlertStep {
  next: AlertInstance | null;
  /** A lifecycle transition, or null when only value and annotations moved. */
  change: AlertChange | null;
}

export interface ConditionObservation {
  fingerprint: string;
  rule: string;
  ruleType: AlertInstance['ruleType'];
  labels: Labels;
  annotations: Record<string, string>;
  receivers: string[];
  value: number | null;
  forMs: number;
}

/**
 * inactive → pending → firing → resolved, at event time `atNs`. `observed` is null when the
 * condition does not hold (or the group has no data) at `atNs`. A pending alert whose condition
 * lapses is dropped without history; a resolved one is history, and the next breach starts a new
 * episode with the same fingerprint.
 */
export function advanceAlert(
  current: AlertInstance | null,
  observed: ConditionObservation | null,
  atNs: bigint,
  createId: () => string,
): AlertStep {
  if (current === null || current.state === 'resolved') {
    if (observed === null) return { next: current, change: null };
    const firesNow = observed.forMs <= 0;
    return {
      next: {
        id: createId(),
        fingerprint: observed.fingerprint,
        rule: observed.rule,
        ruleType: observed.ruleType,
        state: firesNow ? 'firing' : 'pending',
        labels: observed.labels,
        annotations: observed.annotations,
        receivers: observed.receivers,
        value: observed.value,
        activeAtNs: atNs,
        startsAtNs: firesNow ? atNs : null,
        endsAtNs: null,
        lastSeenNs: atNs,
      },
      change: firesNow ? 'firing' : 'pending',
    };
  }
  if (observed === null) {
    if (current.state === 'pending') return { next: null, change: 'dropped' };
    return { next: { ...current, state: 'resolved', endsAtNs: atNs }, change: 'resolved' };
  }
  const refreshed: AlertInstance = {
    ...current,
    labels: observed.labels,
    annotations: observed.annotations,
    receivers: observed.receivers,
    value: observed.value,
    lastSeenNs: atNs,
  };
  if (current.state === 'pending' && atNs - current.activeAtNs >= BigInt(observed.forMs) * 1_000_000n) {
    return { next: { ...refreshed, state: 'firing', startsAtNs: atNs }, change: 'firing' };
  }
  return { next: refreshed, change: null };
}
