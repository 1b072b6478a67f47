import type { Store } from '@governor/store';
import type { PostgresQueryable } from './create-postgres-repository.ts';

// What an actuator found in effect before it carried out a recommendation, kept until the
// recommendation's rollback needs it. DuckDB (migration 0024) for a running Governor, so a restart
// between the apply and the verification still rolls back to the right value; PostgreSQL
// (migratePostgresControlState) for nodes sharing state, so a new leader rolls back what the
// previous one applied; memory for tests and replay.

export interface RollbackValue {
  actuator: string;
  recommendationId: string;
  /** The apply action that read the value. */
  actionId: string;
  /** The object the value was read from (its API path), for the operator reading the table. */
  object: string;
  value: Record<string, unknown>;
  recordedAtMs: number;
}

export interface RollbackStore {
  /**
   * Keeps the first value recorded for (actuator, recommendation): a retried apply reads its own
   * change back and must not replace what was in effect before Governor's first attempt.
   */
  remember(entry: RollbackValue): Promise<void>;
  recall(actuator: string, recommendationId: string): Promise<RollbackValue | null>;
}

export function createMemoryRollbackStore(): RollbackStore {
  const values = new Map<string, RollbackValue>();
  const key = (actuator: string, recommendationId: string) => JSON.stringify([actuator, recommendationId]);
  return {
    async remember(entry) {
      const k = key(entry.actuator, entry.recommendationId);
      if (!values.has(k)) values.set(k, structuredClone(entry));
    },
    async recall(actuator, recommendationId) {
      const entry = values.get(key(actuator, recommendationId));
      return entry ? structuredClone(entry) : null;
    },
  };
}

export function createDuckDbRollbackStore(store: Pick<Store, 'query' | 'execute'>): RollbackStore {
  return {
    async remember(entry) {
      await store.execute(
        `INSERT OR IGNORE INTO control_rollback_values
           (actuator, recommendation_id, action_id, object, value, recorded_at_ms)
         VALUES ($actuator, $recommendation_id, $action_id, $object, $value, $recorded_at_ms)`,
        {
          actuator: entry.actuator,
          recommendation_id: entry.recommendationId,
          action_id: entry.actionId,
          object: entry.object,
          value: JSON.stringify(entry.value),
          recorded_at_ms: entry.recordedAtMs,
        },
      );
    },
    async recall(actuator, recommendationId) {
      const [row] = await store.query<Record<string, unknown>>(
        `SELECT * FROM control_rollback_values
         WHERE actuator = $actuator AND recommendation_id = $recommendation_id`,
        { actuator, recommendation_id: recommendationId },
      );
      return row ? fromRow(row) : null;
    },
  };
}

export function createPostgresRollbackStore(db: PostgresQueryable): RollbackStore {
  return {
    async remember(entry) {
      // The first value wins across nodes too: a new leader retrying the apply keeps the old one's.
      await db.query(
        `INSERT INTO control_rollback_values
           (actuator, recommendation_id, action_id, object, value, recorded_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (actuator, recommendation_id) DO NOTHING`,
        [
          entry.actuator,
          entry.recommendationId,
          entry.actionId,
          entry.object,
          JSON.stringify(entry.value),
          entry.recordedAtMs,
        ],
      );
    },
    async recall(actuator, recommendationId) {
      const { rows } = await db.query(
        'SELECT * FROM control_rollback_values WHERE actuator = $1 AND recommendation_id = $2',
        [actuator, recommendationId],
      );
      return rows[0] ? fromRow(rows[0]) : null;
    },
  };
}

function fromRow(row: Record<string, unknown>): RollbackValue {
  return {
    actuator: String(row.actuator),
    recommendationId: String(row.recommendation_id),
    actionId: String(row.action_id),
    object: String(row.object),
    value: (typeof row.value === 'string' ? JSON.parse(row.value) : row.value) as Record<string, unknown>,
    // BIGINT: DuckDB hands back a number, pg its decimal text.
    recordedAtMs: Number(row.recorded_at_ms),
  };
}
