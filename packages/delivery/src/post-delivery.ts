import { DELIVERY_HEADERS } from './delivery-headers.ts';
import { classifyHttpResponse, type DeliveryResult } from './delivery-result.ts';
import { signPayload } from './sign-payload.ts';

export interface PostDeliveryRequest {
  url: string;
  /** The exact bytes sent and signed. */
  body: string;
  /** Same on every retry of this delivery (Idempotency-Key). */
  deliveryId: string;
  /** X-Governor-Event, e.g. `control.apply`. */
  event: string;
  /** Current secret first, then the previous one while a rotation rolls out; empty sends unsigned. */
  secrets: readonly string[];
  timeoutMs: number;
  /** Aborts the attempt when Governor shuts down. */
  signal: AbortSignal;
  nowMs: number;
  userAgent: string;
  /** Extra headers a receiver asked for (e.g. an Authorization); Governor's own win on a clash. */
  headers?: Record<string, string>;
}

/** One signed JSON POST with its own timeout; never throws. Redirects are not followed (they are failures). */
export async function postDelivery(request: PostDeliveryRequest): Promise<DeliveryResult> {
  const headers: Record<string, string> = {
    ...request.headers,
    'content-type': 'application/json',
    'user-agent': request.userAgent,
    [DELIVERY_HEADERS.idempotencyKey]: request.deliveryId,
    [DELIVERY_HEADERS.event]: request.event,
  };
  if (request.secrets.length > 0)
    headers[DELIVERY_HEADERS.signature] = signPayload(request.body, request.secrets, request.nowMs / 1000);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      headers,
      body: request.body,
      signal: AbortSignal.any([request.signal, timeout]),
      redirect: 'manual',
    });
    const text = await response.text().catch(() => '');
    return classifyHttpResponse(response.status, response.headers.get('retry-after'), text, request.nowMs);
  } catch (error) {
    if (request.signal.aborted && !timeout.aborted)
      return { status: 'failed', httpStatus: null, error: 'delivery cancelled: Governor is shutting down' };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const message = timeout.aborted
      ? `no response within ${request.timeoutMs} ms (timed out)`
      : `cannot reach ${new URL(request.url).host}: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
    return { status: 'retryable', afterMs: null, httpStatus: null, error: message };
  }
}
