import type { Store } from '@governor/store';
import type { AlertInstance, AlertState } from '../alert-instance.ts';
import type { NotificationGroupState } from '../dispatch/notification-dispatcher.ts';
import { toNs } from '../time.ts';
import { loadSqlStatements } from './load-sql.ts';

const SQL = loadSqlStatements(new URL('./alert-instances.sql', import.meta.url), [
  'insertInstance',
  'updateInstance',
  'deleteInstance',
  'selectActive',
  'selectHistory',
  'selectCursor',
  'updateCursor',
  'selectGroups',
  'insertGroup',
  'updateGroup',
  'deleteGroup',
] as const);

/**
 * Alert episodes, notification groups and the evaluation cursor: DuckDB (createAlertRepository) or
 * PostgreSQL (createPostgresAlertRepository).
 */
export interface AlertRepository {
  loadActive(): Promise<AlertInstance[]>;
  insert(instance: AlertInstance): Promise<void>;
  update(instance: AlertInstance): Promise<void>;
  remove(id: string): Promise<void>;
  history(query: { rule?: string; fingerprint?: string; limit: number }): Promise<AlertInstance[]>;
  loadCursor(): Promise<bigint | null>;
  saveCursor(ns: bigint): Promise<void>;
  loadGroups(): Promise<NotificationGroupState[]>;
  saveGroups(change: { upserts: NotificationGroupState[]; deletes: string[] }): Promise<void>;
}

interface InstanceRow {
  id: string;
  fingerprint: string;
  rule: string;
  rule_type: AlertInstance['ruleType'];
  state: AlertState;
  labels: string;
  annotations: string;
  receivers: string[];
  value: number | null;
  active_at_ns: string;
  starts_at_ns: string | null;
  ends_at_ns: string | null;
  last_seen_ns: string;
}

function fromRow(row: InstanceRow): AlertInstance {
  return {
    id: row.id,
    fingerprint: row.fingerprint,
    rule: row.rule,
    ruleType: row.rule_type,
    state: row.state,
    labels: JSON.parse(row.labels),
    annotations: JSON.parse(row.annotations),
    receivers: row.receivers,
    value: row.value,
    activeAtNs: toNs(row.active_at_ns)!,
    startsAtNs: toNs(row.starts_at_ns),
    endsAtNs: toNs(row.ends_at_ns),
    lastSeenNs: toNs(row.last_seen_ns)!,
  };
}

export function createAlertRepository(store: Store, now: () => number): AlertRepository {
  const persistedGroups = new Set<string>();
  const params = (a: AlertInstance) => ({
    id: a.id,
    state: a.state,
    labels: JSON.stringify(a.labels),
    annotations: JSON.stringify(a.annotations),
    receivers: JSON.stringify(a.receivers),
    value: a.value !== null && Number.isFinite(a.value) ? a.value : null,
    startsAtNs: a.startsAtNs,
    endsAtNs: a.endsAtNs,
    lastSeenNs: a.lastSeenNs,
    updatedAtMs: now(),
  });
  return {
    async loadActive() {
      return (await store.query<InstanceRow>(SQL.selectActive)).map(fromRow);
    },
    insert: (a) =>
      store.execute(SQL.insertInstance, {
        ...params(a),
        fingerprint: a.fingerprint,
        rule: a.rule,
        ruleType: a.ruleType,
        activeAtNs: a.activeAtNs,
      }),
    update: (a) => store.execute(SQL.updateInstance, params(a)),
    remove: (id) => store.execute(SQL.deleteInstance, { id }),
    async history({ rule, fingerprint, limit }) {
      const rows = await store.query<InstanceRow>(SQL.selectHistory, {
        rule: rule ?? null,
        fingerprint: fingerprint ?? null,
        limit,
      });
      return rows.map(fromRow);
    },
    async loadCursor() {
      const [row] = await store.query<{ value: string | null }>(SQL.selectCursor);
      return row?.value ? BigInt(row.value) : null;
    },
    saveCursor: (ns) => store.execute(SQL.updateCursor, { value: ns.toString() }),
    async loadGroups() {
      const rows = await store.query<{ state: string }>(SQL.selectGroups);
      const groups = rows.map((r) => JSON.parse(r.state) as NotificationGroupState);
      for (const g of groups) persistedGroups.add(g.id);
      return groups;
    },
    async saveGroups({ upserts, deletes }) {
      for (const id of deletes) {
        if (!persistedGroups.has(id)) continue;
        await store.execute(SQL.deleteGroup, { id });
        persistedGroups.delete(id);
      }
      for (const group of upserts) {
        const values = { id: group.id, state: JSON.stringify(group), updatedAtMs: now() };
        if (persistedGroups.has(group.id)) {
          await store.execute(SQL.updateGroup, values);
        } else {
          await store.execute(SQL.insertGroup, { ...values, receiver: group.receiver });
          persistedGroups.add(group.id);
        }
      }
    },
  };
}
