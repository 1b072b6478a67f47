import { readFileSync } from 'node:fs';
import type { AlertInstance } from '../alert-instance.ts';
import type { NotificationGroupState } from '../dispatch/notification-dispatcher.ts';
import { toNs } from '../time.ts';
import type { AlertRepository } from './alert-repository.ts';
import { loadSqlStatements } from './load-sql.ts';
import type { PostgresQueryable } from './postgres-queryable.ts';

const SQL = loadSqlStatements(new URL('./alert-instances.postgres.sql', import.meta.url), [
  'upsertInstance',
  'deleteInstance',
  'selectActive',
  'selectHistory',
  'selectCursor',
  'upsertCursor',
  'selectGroups',
  'deleteGroups',
  'upsertGroups',
] as const);

const SCHEMA = readFileSync(new URL('./alert-state.postgres.sql', import.meta.url), 'utf8');

/**
 * Creates the alert tables when missing (alert-state.postgres.sql). Every node may run it at start,
 * at the same time: it is one script under an advisory lock, each statement idempotent.
 */
export async function migratePostgresAlertState(db: PostgresQueryable): Promise<void> {
  // Without values, pg sends the script as one simple query: one implicit transaction.
  await db.query(SCHEMA);
}

function fromRow(row: Record<string, unknown>): AlertInstance {
  return {
    id: String(row.id),
    fingerprint: String(row.fingerprint),
    rule: String(row.rule),
    ruleType: row.rule_type as AlertInstance['ruleType'],
    state: row.state as AlertInstance['state'],
    labels: JSON.parse(String(row.labels)),
    annotations: JSON.parse(String(row.annotations)),
    receivers: row.receivers as string[],
    value: row.value === null ? null : Number(row.value),
    activeAtNs: toNs(row.active_at_ns)!,
    startsAtNs: toNs(row.starts_at_ns),
    endsAtNs: toNs(row.ends_at_ns),
    lastSeenNs: toNs(row.last_seen_ns)!,
  };
}

const nsText = (ns: bigint | null) => (ns === null ? null : ns.toString());

/** Alert episodes, notification groups and the evaluation cursor in PostgreSQL (nodes sharing them). */
export function createPostgresAlertRepository(db: PostgresQueryable, now: () => number): AlertRepository {
  const upsert = async (a: AlertInstance) => {
    await db.query(SQL.upsertInstance, [
      a.id,
      a.fingerprint,
      a.rule,
      a.ruleType,
      a.state,
      JSON.stringify(a.labels),
      JSON.stringify(a.annotations),
      a.receivers,
      a.value !== null && Number.isFinite(a.value) ? a.value : null,
      nsText(a.activeAtNs),
      nsText(a.startsAtNs),
      nsText(a.endsAtNs),
      nsText(a.lastSeenNs),
      now(),
    ]);
  };
  return {
    async loadActive() {
      return (await db.query(SQL.selectActive)).rows.map(fromRow);
    },
    insert: upsert,
    update: upsert,
    async remove(id) {
      await db.query(SQL.deleteInstance, [id]);
    },
    async history({ rule, fingerprint, limit }) {
      const { rows } = await db.query(SQL.selectHistory, [rule ?? null, fingerprint ?? null, limit]);
      return rows.map(fromRow);
    },
    async loadCursor() {
      const [row] = (await db.query<{ value: string | null }>(SQL.selectCursor)).rows;
      return row?.value ? BigInt(row.value) : null;
    },
    async saveCursor(ns) {
      await db.query(SQL.upsertCursor, [ns.toString()]);
    },
    async loadGroups() {
      const { rows } = await db.query<{ state: string }>(SQL.selectGroups);
      return rows.map((r) => JSON.parse(r.state) as NotificationGroupState);
    },
    async saveGroups({ upserts, deletes }) {
      if (deletes.length > 0) await db.query(SQL.deleteGroups, [deletes]);
      // One row per group: a group changed twice in a batch is written as it ended.
      const latest = [...new Map(upserts.map((g) => [g.id, g])).values()];
      if (latest.length === 0) return;
      await db.query(SQL.upsertGroups, [
        latest.map((g) => g.id),
        latest.map((g) => g.receiver),
        latest.map((g) => JSON.stringify(g)),
        now(),
      ]);
    },
  };
}
