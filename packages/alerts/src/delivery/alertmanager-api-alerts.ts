import type { Notification } from '../dispatch/notification.ts';
import type { Labels } from '../labels.ts';

/** One element of the body of Alertmanager's POST /api/v2/alerts (postableAlert). */
export interface PostableAlert {
  labels: Labels;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
}

/**
 * Alertmanager judges endsAt against its own wall clock, while Governor's times are event times
 * (a replay may be far in the past). A firing alert is therefore given endsAt = max(now, startsAt)
 * + 4 resend intervals (as Prometheus does) and re-sent each interval; a resolved one ends no later
 * than now so Alertmanager treats it as resolved at once.
 */
export function buildAlertmanagerApiAlerts(
  notification: Notification,
  nowWallMs: number,
  resendIntervalMs: number,
): PostableAlert[] {
  return notification.alerts.map((alert) => {
    const startsAtMs = Date.parse(alert.startsAt);
    const endsAtMs =
      alert.status === 'firing' || alert.endsAt === null
        ? Math.max(nowWallMs, startsAtMs) + 4 * resendIntervalMs
        : Math.max(startsAtMs, Math.min(Date.parse(alert.endsAt), nowWallMs));
    return {
      labels: alert.labels,
      annotations: alert.annotations,
      startsAt: alert.startsAt,
      endsAt: new Date(endsAtMs).toISOString(),
      generatorURL: alert.generatorUrl,
    };
  });
}
