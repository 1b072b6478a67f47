import type { Labels } from '../labels.ts';

export type NotificationStatus = 'firing' | 'resolved';

/** One alert as receivers see it; times are RFC 3339 event times. */
export interface NotifiedAlert {
  fingerprint: string;
  status: NotificationStatus;
  labels: Labels;
  annotations: Record<string, string>;
  startsAt: string;
  /** null while firing. */
  endsAt: string | null;
  generatorUrl: string;
  value: number | null;
}

/** What a receiver is told about one group: every firing alert of it plus newly resolved ones. */
export interface Notification {
  receiver: string;
  groupKey: string;
  groupLabels: Labels;
  status: NotificationStatus;
  alerts: NotifiedAlert[];
  /** Alerts left out because the receiver's max_alerts was reached. */
  truncatedAlerts: number;
  externalUrl: string;
  /** Event time at which the notification was decided. */
  at: string;
}
