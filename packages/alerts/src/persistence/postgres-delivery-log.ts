import { randomUUID } from 'node:crypto';
import type { DeliveryAttemptRecord, DeliveryLog, DeliveryRecord } from './delivery-log.ts';
import { loadSqlStatements } from './load-sql.ts';
import { type PostgresQueryable, type SqlValue, toNumber, toNumberOrNull } from './postgres-queryable.ts';

const SQL = loadSqlStatements(new URL('./deliveries.postgres.sql', import.meta.url), [
  'insertDelivery',
  'claimDelivery',
  'selectClaim',
  'releaseDelivery',
  'recordAttempt',
  'selectPending',
  'selectMaxSeq',
  'selectSeq',
  'selectById',
  'selectByFingerprint',
  'selectDeadLetters',
  'selectRecent',
  'selectAttempts',
  'pruneAttempts',
  'pruneDeliveries',
] as const);

type Row = Record<string, unknown>;

function fromRow(row: Row): DeliveryRecord {
  return {
    id: String(row.id),
    seq: toNumber(row.seq),
    kind: row.kind as DeliveryRecord['kind'],
    receiver: String(row.receiver),
    receiverType: String(row.receiver_type),
    groupKey: String(row.group_key),
    notificationStatus: String(row.notification_status),
    fingerprints: row.fingerprints as string[],
    notification: JSON.parse(String(row.notification)),
    status: row.status as DeliveryRecord['status'],
    attempts: Number(row.attempts),
    createdAtMs: toNumber(row.created_at_ms),
    retryUntilMs: toNumber(row.retry_until_ms),
    nextAttemptAtMs: toNumberOrNull(row.next_attempt_at_ms),
    lastAttemptAtMs: toNumberOrNull(row.last_attempt_at_ms),
    finishedAtMs: toNumberOrNull(row.finished_at_ms),
    lastHttpStatus: toNumberOrNull(row.last_http_status),
    lastError: row.last_error === null ? null : String(row.last_error),
  };
}

function fromAttemptRow(row: Row): DeliveryAttemptRecord {
  return {
    deliveryId: String(row.delivery_id),
    attempt: Number(row.attempt),
    startedAtMs: toNumber(row.started_at_ms),
    durationMs: Number(row.duration_ms),
    outcome: row.outcome as DeliveryAttemptRecord['outcome'],
    httpStatus: toNumberOrNull(row.http_status),
    error: row.error === null ? null : String(row.error),
    retryAfterMs: toNumberOrNull(row.retry_after_ms),
  };
}

export interface PostgresDeliveryLogOptions {
  /** Who holds this log's claims (claimed_by). Default: a random UUID, one per log (per engine). */
  owner?: string;
}

/**
 * The outbox and the delivery log in PostgreSQL, shared by Governor nodes. The queue claims each
 * attempt (claim/release), so a leader that takes over does not send what a deposed leader is still
 * sending; attempts are recorded once per attempt number.
 */
export function createPostgresDeliveryLog(
  db: PostgresQueryable,
  options: PostgresDeliveryLogOptions = {},
): DeliveryLog {
  const owner = options.owner ?? randomUUID();
  const many = async (text: string, values: readonly SqlValue[]) =>
    (await db.query(text, values)).rows.map(fromRow);
  return {
    async maxSeq() {
      const [row] = (await db.query(SQL.selectMaxSeq)).rows;
      return row ? toNumber(row.seq) : 0;
    },
    async insert(r) {
      const { rows } = await db.query(SQL.insertDelivery, [
        r.id,
        r.kind,
        r.receiver,
        r.receiverType,
        r.groupKey,
        r.notificationStatus,
        r.fingerprints,
        JSON.stringify(r.notification),
        r.createdAtMs,
        r.retryUntilMs,
      ]);
      const stored = rows[0] ?? (await db.query(SQL.selectSeq, [r.id])).rows[0];
      return toNumber(stored?.seq);
    },
    async claim(id, leaseMs) {
      const [claimed] = (await db.query(SQL.claimDelivery, [id, owner, Math.ceil(leaseMs)])).rows;
      if (claimed) return { status: 'claimed', record: fromRow(claimed) };
      const [row] = (await db.query(SQL.selectClaim, [id])).rows;
      if (row?.status !== 'pending') return { status: 'gone' };
      return { status: 'held', retryInMs: toNumber(row.claim_left_ms) };
    },
    async release(id) {
      await db.query(SQL.releaseDelivery, [id, owner]);
    },
    async recordAttempt(a, after) {
      await db.query(SQL.recordAttempt, [
        after.id,
        after.status,
        after.attempts,
        after.nextAttemptAtMs,
        after.lastAttemptAtMs,
        after.finishedAtMs,
        after.lastHttpStatus,
        after.lastError,
        a.attempt,
        a.startedAtMs,
        a.durationMs,
        a.outcome,
        a.httpStatus,
        a.error,
        a.retryAfterMs,
      ]);
    },
    pending: () => many(SQL.selectPending, []),
    async get(id) {
      const [row] = (await db.query(SQL.selectById, [id])).rows;
      return row ? fromRow(row) : null;
    },
    byFingerprint: (fingerprint, limit) => many(SQL.selectByFingerprint, [fingerprint, limit]),
    deadLetters: ({ receiver, limit }) => many(SQL.selectDeadLetters, [receiver ?? null, limit]),
    recent: ({ status, receiver, limit }) =>
      many(SQL.selectRecent, [status ?? null, receiver ?? null, limit]),
    async attempts(ids) {
      if (ids.length === 0) return [];
      return (await db.query(SQL.selectAttempts, [ids])).rows.map(fromAttemptRow);
    },
    async prune(beforeMs) {
      await db.query(SQL.pruneAttempts, [beforeMs]);
      await db.query(SQL.pruneDeliveries, [beforeMs]);
    },
  };
}
