import type { AlertView, DeliveryAttemptView, DeliveryView, ReceiverView } from '@governor/conventions';
import type { AlertInstance } from './alert-instance.ts';
import type { ReceiverRuntime } from './delivery/receiver-runtime.ts';
import type { DeliveryAttemptRecord, DeliveryRecord } from './persistence/delivery-log.ts';
import { msToRfc3339, nsToRfc3339 } from './time.ts';

export function toAlertView(alert: AlertInstance): AlertView {
  return {
    id: alert.id,
    fingerprint: alert.fingerprint,
    rule: alert.rule,
    ruleType: alert.ruleType,
    state: alert.state,
    severity: alert.labels.severity ?? null,
    labels: alert.labels,
    annotations: alert.annotations,
    value: alert.value,
    receivers: alert.receivers,
    activeAt: nsToRfc3339(alert.activeAtNs),
    startsAt: alert.startsAtNs === null ? null : nsToRfc3339(alert.startsAtNs),
    endsAt: alert.endsAtNs === null ? null : nsToRfc3339(alert.endsAtNs),
    lastSeenAt: nsToRfc3339(alert.lastSeenNs),
  };
}

const optionalTime = (ms: number | null) => (ms === null ? null : msToRfc3339(ms));

export function toDeliveryView(
  record: DeliveryRecord,
  extras: { attempts?: readonly DeliveryAttemptRecord[]; includeNotification?: boolean } = {},
): DeliveryView {
  const view: DeliveryView = {
    id: record.id,
    kind: record.kind,
    receiver: record.receiver,
    receiverType: record.receiverType,
    groupKey: record.groupKey,
    notificationStatus: record.notificationStatus,
    fingerprints: record.fingerprints,
    status: record.status,
    attempts: record.attempts,
    createdAt: msToRfc3339(record.createdAtMs),
    retryUntil: msToRfc3339(record.retryUntilMs),
    nextAttemptAt: record.status === 'pending' ? optionalTime(record.nextAttemptAtMs) : null,
    lastAttemptAt: optionalTime(record.lastAttemptAtMs),
    finishedAt: optionalTime(record.finishedAtMs),
    lastHttpStatus: record.lastHttpStatus,
    lastError: record.lastError,
  };
  if (extras.attempts) {
    view.attemptLog = extras.attempts.map(
      (a): DeliveryAttemptView => ({
        attempt: a.attempt,
        startedAt: msToRfc3339(a.startedAtMs),
        durationMs: Math.round(a.durationMs * 10) / 10,
        outcome: a.outcome,
        httpStatus: a.httpStatus,
        error: a.error,
        retryAfterMs: a.retryAfterMs,
      }),
    );
  }
  if (extras.includeNotification) view.notification = record.notification;
  return view;
}

export function toReceiverView(receiver: ReceiverRuntime): ReceiverView {
  return {
    name: receiver.name,
    type: receiver.type,
    // Paths and query strings often carry tokens (Slack's do), so only the origin is shown.
    url: new URL(receiver.url).origin,
    signed: receiver.secret !== null,
    sendResolved: receiver.timings.sendResolved,
    groupBy: receiver.timings.groupBy,
    groupWaitS: receiver.timings.groupWaitMs / 1000,
    groupIntervalS: receiver.timings.groupIntervalMs / 1000,
    repeatIntervalS: receiver.timings.repeatIntervalMs / 1000,
  };
}
