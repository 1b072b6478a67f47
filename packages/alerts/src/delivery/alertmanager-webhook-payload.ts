import { commonLabels, type Labels } from '../labels.ts';
import type { Notification, NotificationStatus } from '../dispatch/notification.ts';
import { ZERO_TIME } from '../time.ts';

/** Alertmanager's webhook_config payload, version 4, field for field, so existing receivers work unchanged. */
export interface AlertmanagerWebhookPayload {
  version: '4';
  groupKey: string;
  truncatedAlerts: number;
  status: NotificationStatus;
  receiver: string;
  groupLabels: Labels;
  commonLabels: Labels;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: {
    status: NotificationStatus;
    labels: Labels;
    annotations: Record<string, string>;
    startsAt: string;
    endsAt: string;
    generatorURL: string;
    fingerprint: string;
  }[];
}

export function buildAlertmanagerWebhookPayload(notification: Notification): AlertmanagerWebhookPayload {
  return {
    version: '4',
    groupKey: notification.groupKey,
    truncatedAlerts: notification.truncatedAlerts,
    status: notification.status,
    receiver: notification.receiver,
    groupLabels: notification.groupLabels,
    commonLabels: commonLabels(notification.alerts.map((a) => a.labels)),
    commonAnnotations: commonLabels(notification.alerts.map((a) => a.annotations)),
    externalURL: notification.externalUrl,
    alerts: notification.alerts.map((a) => ({
      status: a.status,
      labels: a.labels,
      annotations: a.annotations,
      startsAt: a.startsAt,
      endsAt: a.endsAt ?? ZERO_TIME,
      generatorURL: a.generatorUrl,
      fingerprint: a.fingerprint,
    })),
  };
}
