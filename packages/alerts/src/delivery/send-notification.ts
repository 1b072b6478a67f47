import { type DeliveryResult, postDelivery } from '@governor/delivery';
import type { Notification } from '../dispatch/notification.ts';
import { buildAlertmanagerApiAlerts } from './alertmanager-api-alerts.ts';
import { buildAlertmanagerWebhookPayload } from './alertmanager-webhook-payload.ts';
import type { ReceiverRuntime } from './receiver-runtime.ts';
import { buildSlackMessage } from './slack-message.ts';

/** The request body for a receiver; built per attempt (Alertmanager's endsAt depends on the clock). */
export function renderBody(receiver: ReceiverRuntime, notification: Notification, nowWallMs: number): string {
  switch (receiver.type) {
    case 'webhook':
      return JSON.stringify(buildAlertmanagerWebhookPayload(notification));
    case 'slack':
      return JSON.stringify(buildSlackMessage(notification));
    case 'alertmanager':
      return JSON.stringify(
        buildAlertmanagerApiAlerts(notification, nowWallMs, receiver.timings.repeatIntervalMs),
      );
  }
}

/** One signed HTTP attempt with the receiver's timeout; never throws. */
export function sendNotification(
  receiver: ReceiverRuntime,
  notification: Notification,
  context: { deliveryId: string; nowWallMs: number; signal: AbortSignal },
): Promise<DeliveryResult> {
  return postDelivery({
    url: receiver.url,
    body: renderBody(receiver, notification, context.nowWallMs),
    deliveryId: context.deliveryId,
    event: `alert.${notification.status}`,
    secrets: receiver.secret ? [receiver.secret] : [],
    timeoutMs: receiver.timeoutMs,
    signal: context.signal,
    nowMs: context.nowWallMs,
    userAgent: 'Governor-Alerts/0.1',
    headers: receiver.headers,
  });
}
