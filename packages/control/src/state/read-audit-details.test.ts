import { describe, expect, test } from 'vitest';
import type { DecisionDetails } from '../engine/audit-entry.ts';
import type { ScopeMetrics } from '../engine/control-types.ts';
import { readAuditDetails } from './read-audit-details.ts';

const metrics: ScopeMetrics = {
  requests: 400,
  goodput: 0.97,
  errorRate: 0.01,
  ttftP95Ms: 850,
  queueP95Ms: 40,
  costUsd: 2.5,
  successPerDollar: 155,
};
const scale = { from: 4, to: 3 };
const delivery = { attempts: 1, httpStatus: 200, error: null };

// One of each kind of details the engine writes, as it writes them.
const written: DecisionDetails[] = [
  { decision: 'proposed', details: { confidence: 0.8 } },
  { decision: 'proposed', details: { confidence: 0.8, gate: 'no policy matches; waiting for a human' } },
  { decision: 'refreshed', details: { action: scale } },
  { decision: 'auto_applied', details: { action: scale, previousAction: { from: 4, to: 4 } } },
  { decision: 'applied', details: { action: scale, previousAction: null } },
  { decision: 'dry_run', details: { action: { weights: { a: 0.5, b: 0.5 } } } },
  { decision: 'approved', details: {} },
  { decision: 'rejected', details: {} },
  { decision: 'superseded', details: {} },
  { decision: 'expired', details: {} },
  { decision: 'expired', details: { before: metrics, after: metrics } },
  { decision: 'held', details: { action: scale, direction: 'decrease', confidence: 0.7 } },
  {
    decision: 'verified',
    details: {
      before: metrics,
      after: metrics,
      expectedImpact: { summary: 'Same goodput', withinSloShare: { from: 0.98, to: 0.97 } },
    },
  },
  { decision: 'rolled_back', details: { before: metrics, after: metrics, rollback: { from: 3, to: 4 } } },
  { decision: 'delivered', details: delivery },
  { decision: 'delivery_failed', details: { attempts: 3, httpStatus: null, error: 'connect ECONNREFUSED' } },
  { decision: 'policies_updated', details: { policies: ['scale-up-auto'] } },
];

describe('reading an audit row back', () => {
  test.each(written)('gives back the $decision decision with its details as written', (entry) => {
    const stored = JSON.parse(JSON.stringify(entry.details));
    expect(readAuditDetails(entry.decision, stored)).toEqual(entry);
  });

  test.each([
    ['an unknown decision', 'escalated', {}],
    ['details that are not an object', 'approved', []],
    ['details where none are written', 'approved', { confidence: 1 }],
    ['a decision without its fields', 'verified', { before: metrics, after: metrics }],
    ['a field of the wrong type', 'held', { action: scale, direction: 'sideways', confidence: 0.7 }],
    ['a policy that is not a name', 'policies_updated', { policies: [1] }],
    ['a delivery without its status', 'delivered', { attempts: 1, error: null }],
  ])('refuses %s', (_, decision, details) => {
    expect(readAuditDetails(decision, details)).toBeNull();
  });
});
