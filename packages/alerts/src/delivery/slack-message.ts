import type { Notification } from '../dispatch/notification.ts';
import { formatLabels } from '../labels.ts';

/** Slack incoming-webhook body: `{text}` in Slack mrkdwn, one line per alert. */
export function buildSlackMessage(notification: Notification): { text: string } {
  const firing = notification.alerts.filter((a) => a.status === 'firing');
  const resolved = notification.alerts.filter((a) => a.status === 'resolved');
  const head =
    notification.status === 'firing'
      ? `[FIRING:${firing.length}${resolved.length > 0 ? `, RESOLVED:${resolved.length}` : ''}]`
      : `[RESOLVED:${resolved.length}]`;
  const lines = [`*${head} ${formatLabels(notification.groupLabels)}*`];
  for (const alert of notification.alerts) {
    const icon = alert.status === 'firing' ? ':red_circle:' : ':large_green_circle:';
    const severity = alert.labels.severity ? ` (${alert.labels.severity})` : '';
    const summary = alert.annotations.summary ?? formatLabels(alert.labels);
    const when =
      alert.status === 'firing' ? `since ${alert.startsAt}` : `${alert.startsAt} – ${alert.endsAt}`;
    lines.push(`${icon} *${alert.labels.alertname ?? 'alert'}*${severity}: ${summary} _${when}_`);
  }
  if (notification.truncatedAlerts > 0) lines.push(`…and ${notification.truncatedAlerts} more`);
  lines.push(`<${notification.externalUrl}|Open Governor>`);
  return { text: lines.join('\n') };
}
