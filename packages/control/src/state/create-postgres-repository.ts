import type { PolicyConfig } from '@governor/conventions';
import type { AuditEntry } from '../engine/audit-entry.ts';
import type { RecommendationRecord } from '../engine/control-types.ts';
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
  type SqlValue,
  auditRow,
  fromAuditRow,
  fromRow,
  parseJson,
  recommendationRow,
} from './recommendation-rows.ts';

// Recommendations, the audit log and API-set policies in PostgreSQL, for Governor nodes that share
// them (store.engine: clickhouse). The same columns as the DuckDB tables (recommendation-rows.ts),
// except that the audit log's order comes from a sequence, so nodes appending at once never take
// the same number.

/** What the repository needs of a pg.Pool (or a client): one statement with positional values. */
export interface PostgresQueryable {
  query<R extends Row = Row>(text: string, values?: readonly SqlValue[]): Promise<{ rows: R[] }>;
}

/**
 * Creates the tables when missing. Every node runs it at start, possibly at the same moment: so it
 * is one script (one transaction) under an advisory lock, since CREATE ... IF NOT EXISTS fails when
 * another session creates the same name concurrently; each statement is idempotent.
 */
export async function migratePostgresControlState(db: PostgresQueryable): Promise<void> {
  // Without values, pg sends the statements as one simple query: one implicit transaction.
  await db.query(
    [
      "SELECT pg_advisory_xact_lock(hashtext('governor.control_state.schema'))",
      `CREATE TABLE IF NOT EXISTS control_recommendations (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        target_key TEXT NOT NULL,
        action TEXT NOT NULL,
        direction TEXT NOT NULL,
        reason TEXT NOT NULL,
        evidence TEXT NOT NULL,
        expected_impact TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        state TEXT NOT NULL,
        policy TEXT,
        gate TEXT,
        scope_pools TEXT NOT NULL,
        created_ns BIGINT NOT NULL,
        updated_ns BIGINT NOT NULL,
        applied_ns BIGINT,
        verified_ns BIGINT,
        previous_action TEXT,
        baseline TEXT,
        action_id TEXT,
        verification TEXT,
        cause TEXT,
        hold TEXT,
        waits TEXT
      )`,
      // Tables created before a column was added get it here.
      'ALTER TABLE control_recommendations ADD COLUMN IF NOT EXISTS waits TEXT',
      'CREATE INDEX IF NOT EXISTS control_recommendations_created ON control_recommendations (created_ns DESC, id)',
      `CREATE TABLE IF NOT EXISTS control_audit (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        at_ns BIGINT NOT NULL,
        recorded_at_ms BIGINT NOT NULL,
        recommendation_id TEXT,
        action_id TEXT,
        kind TEXT,
        target TEXT,
        decision TEXT NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT NOT NULL,
        result TEXT NOT NULL,
        details TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS control_audit_recommendation ON control_audit (recommendation_id, seq DESC)',
      `CREATE TABLE IF NOT EXISTS control_policies (
        id INTEGER PRIMARY KEY,
        config_hash TEXT NOT NULL,
        policies TEXT NOT NULL,
        updated_by TEXT NOT NULL,
        updated_at_ms BIGINT NOT NULL
      )`,
      // What actuators found in effect before applying (rollback-store.ts).
      `CREATE TABLE IF NOT EXISTS control_rollback_values (
        actuator TEXT NOT NULL,
        recommendation_id TEXT NOT NULL,
        action_id TEXT NOT NULL,
        object TEXT NOT NULL,
        value TEXT NOT NULL,
        recorded_at_ms BIGINT NOT NULL,
        PRIMARY KEY (actuator, recommendation_id)
      )`,
    ].join(';\n'),
  );
}

const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(', ');

const UPSERT = `INSERT INTO control_recommendations (${RECOMMENDATION_COLUMNS.join(', ')})
VALUES (${placeholders(RECOMMENDATION_COLUMNS.length)})
ON CONFLICT (id) DO UPDATE SET ${RECOMMENDATION_COLUMNS.filter((c) => c !== 'id')
  .map((c) => `${c} = EXCLUDED.${c}`)
  .join(', ')}`;

const AUDIT_INSERT_COLUMNS = AUDIT_COLUMNS.filter((c) => c !== 'seq');
const INSERT_AUDIT = `INSERT INTO control_audit (${AUDIT_INSERT_COLUMNS.join(', ')})
VALUES (${placeholders(AUDIT_INSERT_COLUMNS.length)})`;

/** pg takes bigint values as their decimal text. */
const pgValue = (v: SqlValue): SqlValue => (typeof v === 'bigint' ? v.toString() : v);

export function createPostgresRepository(db: PostgresQueryable): ControlRepository {
  return {
    async saveRecommendations(records: readonly RecommendationRecord[]) {
      for (const r of records) {
        const row = recommendationRow(r);
        await db.query(
          UPSERT,
          RECOMMENDATION_COLUMNS.map((c) => pgValue(row[c])),
        );
      }
    },
    async appendAudit(entries: readonly AuditEntry[]) {
      for (const e of entries) {
        const row = auditRow(e, null);
        await db.query(
          INSERT_AUDIT,
          AUDIT_INSERT_COLUMNS.map((c) => pgValue(row[c])),
        );
      }
    },
    async listRecommendations(filter: RecommendationFilter) {
      const where: string[] = [];
      const values: SqlValue[] = [];
      if (filter.states && filter.states.length > 0) {
        values.push(...filter.states);
        where.push(`state IN (${placeholders(filter.states.length)})`);
      }
      if (filter.kind) {
        values.push(filter.kind);
        where.push(`kind = $${values.length}`);
      }
      values.push(filter.limit);
      const { rows } = await db.query(
        `SELECT * FROM control_recommendations ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY created_ns DESC, id LIMIT $${values.length}`,
        values,
      );
      return rows.map(fromRow);
    },
    async getRecommendation(id: string) {
      const { rows } = await db.query('SELECT * FROM control_recommendations WHERE id = $1', [id]);
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async loadActive() {
      const { rows } = await db.query(
        `SELECT * FROM control_recommendations
         WHERE state IN ('proposed', 'approved') OR applied_ns IS NOT NULL
         ORDER BY coalesce(applied_ns, created_ns), id`,
      );
      return rows.map(fromRow);
    },
    async listAudit(filter: AuditFilter) {
      const { rows } = filter.recommendationId
        ? await db.query(
            'SELECT * FROM control_audit WHERE recommendation_id = $1 ORDER BY seq DESC LIMIT $2',
            [filter.recommendationId, filter.limit],
          )
        : await db.query('SELECT * FROM control_audit ORDER BY seq DESC LIMIT $1', [filter.limit]);
      return rows.map(fromAuditRow);
    },
    async loadPolicies() {
      const { rows } = await db.query('SELECT * FROM control_policies WHERE id = 1');
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
      await db.query(
        `INSERT INTO control_policies (id, config_hash, policies, updated_by, updated_at_ms)
         VALUES (1, $1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET config_hash = EXCLUDED.config_hash, policies = EXCLUDED.policies,
           updated_by = EXCLUDED.updated_by, updated_at_ms = EXCLUDED.updated_at_ms`,
        [next.configHash, JSON.stringify(next.policies), next.updatedBy, next.updatedAtMs],
      );
    },
  };
}
