import type { PolicyConfig } from '@governor/conventions';
import type { Store } from '@governor/store';
import type {
  AuditFilter,
  ControlRepository,
  RecommendationFilter,
  StoredPolicies,
} from './control-repository.ts';
import {
  AUDIT_COLUMNS,
  RECOMMENDATION_COLUMNS,
  type Row,
  auditRow,
  fromAuditRow,
  fromRow,
  parseJson,
  recommendationRow,
} from './recommendation-rows.ts';

// Tables from migrations 0020–0025 and 0062. Event times are BIGINT ns; JSON columns hold the API shapes.

const UPSERT = `INSERT OR REPLACE INTO control_recommendations (${RECOMMENDATION_COLUMNS.join(', ')})
VALUES (${RECOMMENDATION_COLUMNS.map((c) => `$${c}`).join(', ')})`;

const INSERT_AUDIT = `INSERT INTO control_audit (${AUDIT_COLUMNS.join(', ')})
VALUES (${AUDIT_COLUMNS.map((c) => `$${c}`).join(', ')})`;

export function createDuckDbRepository(store: Pick<Store, 'query' | 'execute'>): ControlRepository {
  let nextSeq: number | null = null;
  // Audit appends come from ticks and from delivery callbacks; keep their sequence numbers in order.
  let auditChain: Promise<void> = Promise.resolve();

  return {
    async saveRecommendations(records) {
      for (const r of records) await store.execute(UPSERT, recommendationRow(r));
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
          await store.execute(INSERT_AUDIT, auditRow(e, nextSeq++));
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
