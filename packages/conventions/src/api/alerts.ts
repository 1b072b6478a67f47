// Shapes of the alerting API (GET /api/alerts and friends; packages/alerts/README.md).
// Event times (activeAt, startsAt, endsAt…) are RFC 3339 from the telemetry's clock; delivery times
// are the wall clock.

export type AlertViewState = 'pending' | 'firing' | 'resolved';

export interface AlertView {
  /** One episode; a fingerprint that fires again gets a new id. */
  id: string;
  /** Hash of the rule name and group labels; stable across episodes and restarts. */
  fingerprint: string;
  rule: string;
  ruleType: 'threshold' | 'slo_burn_rate' | 'event';
  state: AlertViewState;
  severity: string | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  value: number | null;
  receivers: string[];
  activeAt: string;
  startsAt: string | null;
  endsAt: string | null;
  lastSeenAt: string;
}

export interface AlertsResponse {
  /** Last evaluated event time; null before the first evaluation. */
  evaluatedAt: string | null;
  active: AlertView[];
  history: AlertView[];
}

export interface DeliveryAttemptView {
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: 'ok' | 'failed' | 'retryable';
  httpStatus: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

export interface DeliveryView {
  id: string;
  kind: 'notification' | 'test';
  receiver: string;
  receiverType: string;
  groupKey: string;
  /** Status of the notification (firing | resolved), not of its delivery. */
  notificationStatus: string;
  fingerprints: string[];
  /** pending (queued or retrying) | delivered | dead (gave up; a dead letter). */
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  createdAt: string;
  retryUntil: string;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  finishedAt: string | null;
  lastHttpStatus: number | null;
  lastError: string | null;
  attemptLog?: DeliveryAttemptView[];
  /** The notification as stored (labels, annotations, times), for dead letters. */
  notification?: unknown;
}

export interface ReceiverView {
  name: string;
  type: 'webhook' | 'slack' | 'alertmanager';
  /** Origin only (scheme, host, port): paths and query strings often carry tokens. */
  url: string;
  signed: boolean;
  sendResolved: boolean;
  groupBy: string[];
  groupWaitS: number;
  groupIntervalS: number;
  repeatIntervalS: number;
}

export interface ReceiverTestResponse {
  receiver: string;
  deliveryId: string;
  outcome: 'ok' | 'failed' | 'retryable';
  httpStatus: number | null;
  error: string | null;
}
