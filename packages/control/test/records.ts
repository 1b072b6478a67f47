import type { AuditEntry } from '../src/engine/audit-entry.ts';
import type { RecommendationRecord } from '../src/engine/control-types.ts';

// Records as the control engine writes them, for the tests of the stores that keep them (the
// control repository on DuckDB and PostgreSQL, `governor migrate`).

/** An instant in 2025, ns: the records' minutes count from it. */
export const RECORDS_T0_NS = 1_765_000_000_000_000_000n;
const T = RECORDS_T0_NS;

export function scaleRecord(
  id: string,
  minute: number,
  over: Partial<RecommendationRecord> = {},
): RecommendationRecord {
  return {
    id,
    kind: 'scale',
    action: { from: 2, to: 3 },
    previousAction: null,
    target: { pool: 'llama-8b-h100' },
    targetKey: 'pool=llama-8b-h100',
    direction: 'increase',
    reason: 'TTFT p95 2.4 s over the 2 s SLO; queueing is 71 % of it',
    evidence: [{ signal: 'ttft_p95_ms', value: 2400, threshold: 2000, window: '5m' }],
    expectedImpact: {
      summary: '2 → 3 replicas',
      ttftP95Ms: { from: 2400, to: 1300 },
    } as RecommendationRecord['expectedImpact'],
    confidence: 0.83,
    state: 'proposed',
    policy: null,
    gate: 'approval',
    scopePools: ['llama-8b-h100'],
    cause: null,
    createdNs: T + BigInt(minute) * 60_000_000_000n,
    updatedNs: T + BigInt(minute) * 60_000_000_000n,
    appliedNs: null,
    verifiedNs: null,
    baseline: null,
    actionId: null,
    verification: null,
    hold: {
      rule: 'no_reversal_in_cooldown',
      why: 'a scale-in of this pool was applied 2 minutes ago',
    } as RecommendationRecord['hold'],
    waits: 'seen for one tick only, so it is auto-applied once it persists',
    ...over,
  } as RecommendationRecord;
}

export function auditEntry(id: string, recommendationId: string, minute: number): AuditEntry {
  return {
    id,
    // A nanosecond part below the millisecond: an engine must keep it.
    atNs: T + BigInt(minute) * 60_000_000_000n + 123n,
    recordedAtMs: 1_765_000_000_000 + minute * 60_000,
    recommendationId,
    actionId: null,
    kind: 'scale',
    target: { pool: 'llama-8b-h100' },
    decision: 'proposed',
    actor: 'governor',
    reason: 'TTFT over the SLO',
    result: 'ok',
    details: { confidence: 0.83, gate: 'approval' },
  } as AuditEntry;
}
