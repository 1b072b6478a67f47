import type { Store } from '@governor/store';
import type { Notification } from '../dispatch/notification.ts';
import type { DeliveryResult } from '@governor/delivery';
import { loadSqlStatements } from './load-sql.ts';

const SQL = loadSqlStatements(new URL('./deliveries.sql', import.meta.url), [
  'insertDelivery',
  'recordAttempt',
  'updateDelivery',
  'selectPending',
  'selectMaxSeq',
  'selectById',
  'selectByFingerprint',
  'selectDeadLetters',
  'selectRecent',
  'selectAttempts',
  'pruneAttempts',
  'pruneDeliveries',
] as const);

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';
export type DeliveryKind = 'notification' | 'test';

export interface DeliveryRecord {
  id: string;
  seq: number;
  kind: DeliveryKind;
  receiver: string;
  receiverType: string;
  groupKey: string;
  notificationStatus: string;
  fingerprints: string[];
  notification: Notification;
  status: DeliveryStatus;
  attempts: number;
  createdAtMs: number;
  retryUntilMs: number;
  nextAttemptAtMs: number | null;
  lastAttemptAtMs: number | null;
  finishedAtMs: number | null;
  lastHttpStatus: number | null;
  lastError: string | null;
}

/**
 * An attempt's outcome as stored and served by /api/alerts/deliveries. The stored rows and the API
 * predate the shared DeliveryResult and keep their word `ok` for a delivered attempt.
 */
export type AttemptOutcome = 'ok' | 'failed' | 'retryable';

export function attemptOutcome(result: DeliveryResult): AttemptOutcome {
  return result.status === 'delivered' ? 'ok' : result.status;
}

export interface DeliveryAttemptRecord {
  deliveryId: string;
  attempt: number;
  startedAtMs: number;
  durationMs: number;
  outcome: AttemptOutcome;
  httpStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

interface DeliveryRow {
  id: string;
  seq: number;
  kind: DeliveryKind;
  receiver: string;
  receiver_type: string;
  group_key: string;
  notification_status: string;
  fingerprints: string[];
  notification: string;
  status: DeliveryStatus;
  attempts: number;
  created_at_ms: number;
  retry_until_ms: number;
  next_attempt_at_ms: number | null;
  last_attempt_at_ms: number | null;
  finished_at_ms: number | null;
  last_http_status: number | null;
  last_error: string | null;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at_ms: number;
  duration_ms: number;
  outcome: AttemptOutcome;
  http_status: number | null;
  error: string | null;
  retry_after_ms: number | null;
}

function fromRow(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    seq: row.seq,
    kind: row.kind,
    receiver: row.receiver,
    receiverType: row.receiver_type,
    groupKey: row.group_key,
    notificationStatus: row.notification_status,
    fingerprints: row.fingerprints,
    notification: JSON.parse(row.notification),
    status: row.status,
    attempts: row.attempts,
    createdAtMs: row.created_at_ms,
    retryUntilMs: row.retry_until_ms,
    nextAttemptAtMs: row.next_attempt_at_ms,
    lastAttemptAtMs: row.last_attempt_at_ms,
    finishedAtMs: row.finished_at_ms,
    lastHttpStatus: row.last_http_status,
    lastError: row.last_error,
  };
}

/** What a shared log answers a queue that wants to make a delivery's next attempt. */
export type DeliveryClaim =
  /** This queue makes the attempt; `record` is the delivery as stored (attempts made elsewhere count). */
  | { status: 'claimed'; record: DeliveryRecord }
  /** Another queue holds it (a previous leader still sending); ask again after `retryInMs`. */
  | { status: 'held'; retryInMs: number }
  /** Finished elsewhere, or pruned: nothing left to send. */
  | { status: 'gone' };

/** The outbox and the delivery log: DuckDB (createDeliveryLog) or PostgreSQL (createPostgresDeliveryLog). */
export interface DeliveryLog {
  maxSeq(): Promise<number>;
  /** Stores a new pending delivery; returns its seq as stored (a shared log numbers deliveries itself). */
  insert(record: DeliveryRecord): Promise<number>;
  recordAttempt(attempt: DeliveryAttemptRecord, after: DeliveryRecord): Promise<void>;
  /**
   * Only a log shared by several nodes has these: the queue claims a delivery for `leaseMs` before
   * each attempt, so a delivery is never sent by two nodes at once, and releases the claim when it
   * stops mid-send.
   */
  claim?(id: string, leaseMs: number): Promise<DeliveryClaim>;
  release?(id: string): Promise<void>;
  pending(): Promise<DeliveryRecord[]>;
  get(id: string): Promise<DeliveryRecord | null>;
  byFingerprint(fingerprint: string, limit: number): Promise<DeliveryRecord[]>;
  deadLetters(query: { receiver?: string; limit: number }): Promise<DeliveryRecord[]>;
  recent(query: { status?: DeliveryStatus; receiver?: string; limit: number }): Promise<DeliveryRecord[]>;
  attempts(ids: readonly string[]): Promise<DeliveryAttemptRecord[]>;
  /** Deletes finished deliveries (delivered or dead) that finished before `beforeMs`. */
  prune(beforeMs: number): Promise<void>;
}

export function createDeliveryLog(store: Store): DeliveryLog {
  return {
    async maxSeq() {
      const [row] = await store.query<{ seq: number }>(SQL.selectMaxSeq);
      return row?.seq ?? 0;
    },
    insert: async (r) => {
      await store.execute(SQL.insertDelivery, {
        id: r.id,
        seq: r.seq,
        kind: r.kind,
        receiver: r.receiver,
        receiverType: r.receiverType,
        groupKey: r.groupKey,
        notificationStatus: r.notificationStatus,
        fingerprints: JSON.stringify(r.fingerprints),
        notification: JSON.stringify(r.notification),
        createdAtMs: r.createdAtMs,
        retryUntilMs: r.retryUntilMs,
      });
      return r.seq;
    },
    async recordAttempt(a, after) {
      await store.execute(SQL.recordAttempt, {
        deliveryId: a.deliveryId,
        attempt: a.attempt,
        startedAtMs: a.startedAtMs,
        durationMs: a.durationMs,
        outcome: a.outcome,
        httpStatus: a.httpStatus,
        error: a.error,
        retryAfterMs: a.retryAfterMs,
      });
      await store.execute(SQL.updateDelivery, {
        id: after.id,
        status: after.status,
        attempts: after.attempts,
        nextAttemptAtMs: after.nextAttemptAtMs,
        lastAttemptAtMs: after.lastAttemptAtMs,
        finishedAtMs: after.finishedAtMs,
        lastHttpStatus: after.lastHttpStatus,
        lastError: after.lastError,
      });
    },
    async pending() {
      return (await store.query<DeliveryRow>(SQL.selectPending)).map(fromRow);
    },
    async get(id) {
      const [row] = await store.query<DeliveryRow>(SQL.selectById, { id });
      return row ? fromRow(row) : null;
    },
    async byFingerprint(fingerprint, limit) {
      return (await store.query<DeliveryRow>(SQL.selectByFingerprint, { fingerprint, limit })).map(fromRow);
    },
    async deadLetters({ receiver, limit }) {
      return (
        await store.query<DeliveryRow>(SQL.selectDeadLetters, { receiver: receiver ?? null, limit })
      ).map(fromRow);
    },
    async recent({ status, receiver, limit }) {
      return (
        await store.query<DeliveryRow>(SQL.selectRecent, {
          status: status ?? null,
          receiver: receiver ?? null,
          limit,
        })
      ).map(fromRow);
    },
    async prune(beforeMs) {
      await store.execute(SQL.pruneAttempts, { beforeMs });
      await store.execute(SQL.pruneDeliveries, { beforeMs });
    },
    async attempts(ids) {
      if (ids.length === 0) return [];
      const rows = await store.query<AttemptRow>(SQL.selectAttempts, { ids: JSON.stringify(ids) });
      return rows.map((r) => ({
        deliveryId: r.delivery_id,
        attempt: r.attempt,
        startedAtMs: r.started_at_ms,
        durationMs: r.duration_ms,
        outcome: r.outcome,
        httpStatus: r.http_status,
        error: r.error,
        retryAfterMs: r.retry_after_ms,
      }));
    },
  };
}
