import {
  type AuditDecision,
  type AuditDetailsByDecision,
  type DecisionDetails,
  isAuditDecision,
} from '../engine/audit-entry.ts';

// An audit row's decision and details come back from the store as a string and parsed JSON. Each
// decision's details are checked for the fields its type names before they are typed as it; actions,
// metrics and predictions only for being objects (their fields are the engine's, written with them).

type Json = Record<string, unknown>;
type Check<D extends AuditDecision> = (d: Json) => d is AuditDetailsByDecision[D];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (d: Json) => Object.keys(d).length === 0;
const isObserved = (d: Json) => isObject(d.before) && isObject(d.after);
const isApplied = (d: Json): d is AuditDetailsByDecision['applied'] =>
  isObject(d.action) && (d.previousAction === null || isObject(d.previousAction));
const isDelivery = (d: Json): d is AuditDetailsByDecision['delivered'] =>
  typeof d.attempts === 'number' &&
  (d.httpStatus === null || typeof d.httpStatus === 'number') &&
  (d.error === null || typeof d.error === 'string');

const CHECKS: { [D in AuditDecision]: Check<D> } = {
  proposed: (d): d is AuditDetailsByDecision['proposed'] =>
    typeof d.confidence === 'number' && (d.gate === undefined || typeof d.gate === 'string'),
  refreshed: (d): d is AuditDetailsByDecision['refreshed'] => isObject(d.action),
  auto_applied: isApplied,
  dry_run: (d): d is AuditDetailsByDecision['dry_run'] => isObject(d.action),
  approved: (d): d is AuditDetailsByDecision['approved'] => isEmpty(d),
  rejected: (d): d is AuditDetailsByDecision['rejected'] => isEmpty(d),
  applied: isApplied,
  expired: (d): d is AuditDetailsByDecision['expired'] => isEmpty(d) || isObserved(d),
  superseded: (d): d is AuditDetailsByDecision['superseded'] => isEmpty(d),
  held: (d): d is AuditDetailsByDecision['held'] =>
    isObject(d.action) &&
    (d.direction === 'increase' || d.direction === 'decrease') &&
    typeof d.confidence === 'number',
  verified: (d): d is AuditDetailsByDecision['verified'] => isObserved(d) && isObject(d.expectedImpact),
  rolled_back: (d): d is AuditDetailsByDecision['rolled_back'] => isObserved(d) && isObject(d.rollback),
  delivered: isDelivery,
  delivery_failed: isDelivery,
  policies_updated: (d): d is AuditDetailsByDecision['policies_updated'] =>
    Array.isArray(d.policies) && d.policies.every((p) => typeof p === 'string'),
};

/** The decision and its details, or null when either is not what the engine writes. */
export function readAuditDetails(decision: unknown, details: unknown): DecisionDetails | null {
  if (!isAuditDecision(decision) || !isObject(details)) return null;
  return readAs(decision, details);
}

function readAs<D extends AuditDecision>(decision: D, details: Json): DecisionDetails<D> | null {
  const check: Check<D> = CHECKS[decision];
  return check(details) ? { decision, details } : null;
}
