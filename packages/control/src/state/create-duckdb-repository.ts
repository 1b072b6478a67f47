import type { PolicyConfig, RecommendationKind, RecommendationState } from '@governor/conventions';
import type { Store } from '@governor/store';
import type { AuditEntry } from '../engine/audit-entry.ts';
import type { Direction, KindActions, RecommendationRecord } from '../engine/control-types.ts';
import type {
  AuditFilter,
  ControlRepository,
  RecommendationFilter,
  StoredPolicies,
} from './control-repository.ts';
import { readAuditDetails } from './read-audit-details.ts';

// Tables from migrations 0020–0025. Event times are BIGINT ns; JSON columns hold the API shapes.

const COLUMNS = [
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
] as const;

const UPSERT = `INSERT OR REPLACE INTO control_recommendations (${COLUMNS.join(', ')})
VALUES (${COLUMNS.map((c) => `$${c}`).join(', ')})`;

const AUDIT_COLUMNS = [
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

const INSERT_AUDIT = `INSERT INTO control_audit (${AUDIT_COLUMNS.join(', ')})
VALUES (${AUDIT_COLUMNS.map((c) => `$${c}`).join(', ')})`;

type Row = Record<string, unknown>;

export function createDuckDbRepository(store: Pick<Store, 'query' | 'execute'>): ControlRepository {
  let nextSeq: number | null = null;
  // Audit appends come from ticks and from delivery callbacks; keep their sequence numbers in order.
  let auditChain: Promise<void> = Promise.resolve();

  const toParams = (r: RecommendationRecord) => ({
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
  });

  return {
    async saveRecommendations(records) {
      for (const r of records) await store.execute(UPSERT, toParams(r));
    },
    appendAudit(entries) {
      const run = auditChain.then(async () => {
        if (nextSeq === null) {
          const [row] = await store.query<{ seq: number | string | null }>(
            'SELECT max(seq) AS seq FROM control_audit',
          );
          nextSeq = row?.seq === null || row?.seq === undefined ? 1 : Number(row.seq) + 1;
        }
        for (const e of entries) {
          await store.execute(INSERT_AUDIT, {
            seq: nextSeq++,
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
          });
        }
      });
      auditChain = run.catch(() => undefined);
      return run;
    },
    async listRecommendations(filter: RecommendationFilter) {
      const where: string[] = [];
      const params: Record<string, string | number> = { limit: filter.limit };
      if (filter.states && filter.states.length > 0) {
        where.push(`state IN (${filter.states.map((_, i) => `$s${i}`).join(', ')})`);
        filter.states.forEach((s, i) => {
          params[`s${i}`] = s;
        });
      }
      if (filter.kind) {
        where.push('kind = $kind');
        params.kind = filter.kind;
      }
      const rows = await store.query<Row>(
        `SELECT * FROM control_recommendations ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY created_ns DESC, id LIMIT $limit`,
        params,
      );
      return rows.map(fromRow);
    },
    async getRecommendation(id) {
      const rows = await store.query<Row>('SELECT * FROM control_recommendations WHERE id = $id', { id });
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async loadActive() {
      const rows = await store.query<Row>(
        `SELECT * FROM control_recommendations
         WHERE state IN ('proposed', 'approved') OR applied_ns IS NOT NULL
         ORDER BY coalesce(applied_ns, created_ns)`,
      );
      return rows.map(fromRow);
    },
    async listAudit(filter: AuditFilter) {
      await auditChain;
      const rows = await store.query<Row>(
        `SELECT * FROM control_audit ${filter.recommendationId ? 'WHERE recommendation_id = $rid' : ''}
         ORDER BY seq DESC LIMIT $limit`,
        filter.recommendationId
          ? { rid: filter.recommendationId, limit: filter.limit }
          : { limit: filter.limit },
      );
      return rows.map(fromAuditRow);
    },
    async loadPolicies() {
      const rows = await store.query<Row>('SELECT * FROM control_policies WHERE id = 1');
      const row = rows[0];
      if (!row) return null;
      return {
        configHash: String(row.config_hash),
        policies: parseJson(row.policies) as PolicyConfig[],
        updatedBy: String(row.updated_by),
        updatedAtMs: Number(row.updated_at_ms),
      };
    },
    async savePolicies(next: StoredPolicies) {
      await store.execute(
        `INSERT OR REPLACE INTO control_policies (id, config_hash, policies, updated_by, updated_at_ms)
         VALUES (1, $hash, $policies, $by, $at)`,
        {
          hash: next.configHash,
          policies: JSON.stringify(next.policies),
          by: next.updatedBy,
          at: next.updatedAtMs,
        },
      );
    },
  };
}

function parseJson(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return JSON.parse(value);
  return value;
}

function toBigint(value: unknown): bigint | null {
  if (value === null || value === undefined) return null;
  return BigInt(value as string | number);
}

function fromRow(row: Row): RecommendationRecord {
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
  };
}

function fromAuditRow(row: Row): AuditEntry {
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
