import type {
  AlertView,
  AlertsResponse,
  DeliveryView,
  ReceiverTestResponse,
  ReceiverView,
} from '@governor/conventions';
import { requestJson } from '../lib/api-client.ts';

export type { AlertView, DeliveryView, ReceiverView };

// Alerts (packages/alerts/README.md): GET /api/alerts → {active, history}, deliveries, dead
// letters, receivers and POST /api/receivers/:name/test.

export function fetchAlerts(signal?: AbortSignal): Promise<AlertsResponse> {
  return requestJson<AlertsResponse>('/api/alerts?limit=200', signal ? { signal } : {});
}

export async function fetchDeliveries(signal?: AbortSignal): Promise<DeliveryView[]> {
  const body = await requestJson<{ deliveries: DeliveryView[] }>(
    '/api/alerts/deliveries?limit=100',
    signal ? { signal } : {},
  );
  return body.deliveries ?? [];
}

export async function fetchDeadLetters(signal?: AbortSignal): Promise<DeliveryView[]> {
  const body = await requestJson<{ deadLetters: DeliveryView[] }>(
    '/api/alerts/dead-letters?limit=100',
    signal ? { signal } : {},
  );
  return body.deadLetters ?? [];
}

export async function fetchReceivers(signal?: AbortSignal): Promise<ReceiverView[]> {
  const body = await requestJson<{ receivers: ReceiverView[] }>('/api/receivers', signal ? { signal } : {});
  return body.receivers ?? [];
}

export function testReceiver(name: string): Promise<ReceiverTestResponse> {
  return requestJson<ReceiverTestResponse>(`/api/receivers/${encodeURIComponent(name)}/test`, {
    method: 'POST',
    body: {},
  });
}

/** RFC 3339 → epoch ms (null-safe). */
export function isoToMs(value: string | null | undefined): number | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}
