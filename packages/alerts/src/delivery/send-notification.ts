import type { Notification } from '../dispatch/notification.ts';
import { buildAlertmanagerApiAlerts } from './alertmanager-api-alerts.ts';
import { buildAlertmanagerWebhookPayload } from './alertmanager-webhook-payload.ts';
import { classifyResponse, type DeliveryResult } from './delivery-result.ts';
import { SIGNATURE_HEADER, signGovernorPayload } from './governor-signature.ts';
import type { ReceiverRuntime } from './receiver-runtime.ts';
import { buildSlackMessage } from './slack-message.ts';

export const DELIVERY_ID_HEADER = 'X-Governor-Delivery';

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

/** One HTTP attempt with the receiver's timeout; never throws. */
export async function sendNotification(
  receiver: ReceiverRuntime,
  notification: Notification,
  context: { deliveryId: string; nowWallMs: number; signal: AbortSignal },
): Promise<DeliveryResult> {
  const body = renderBody(receiver, notification, context.nowWallMs);
  const headers: Record<string, string> = {
    ...receiver.headers,
    'content-type': 'application/json',
    'user-agent': 'Governor-Alerts/0.1',
    [DELIVERY_ID_HEADER]: context.deliveryId,
  };
  if (receiver.secret)
    headers[SIGNATURE_HEADER] = signGovernorPayload(body, receiver.secret, context.nowWallMs / 1000);
  const timeout = AbortSignal.timeout(receiver.timeoutMs);
  try {
    const response = await fetch(receiver.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.any([context.signal, timeout]),
      redirect: 'manual',
    });
    const text = await response.text().catch(() => '');
    return classifyResponse(response.status, response.headers.get('retry-after'), text, context.nowWallMs);
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const message = timeout.aborted
      ? `no response within ${receiver.timeoutMs} ms`
      : context.signal.aborted
        ? 'aborted: Governor is stopping; the delivery resumes after restart'
        : `cannot reach ${new URL(receiver.url).host}: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
    return { outcome: 'retryable', afterMs: null, httpStatus: null, error: message };
  }
}
