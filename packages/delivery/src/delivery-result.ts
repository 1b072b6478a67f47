import { parseRetryAfterMs } from './parse-retry-after.ts';

/**
 * The outcome of one outbound delivery attempt (an actuator call, an alert notification). Expected
 * failures are values, not throws: `failed` will not get better by retrying, `retryable` may, after
 * at least `afterMs` when the peer said so (Retry-After).
 */
export type DeliveryResult =
  | { status: 'delivered'; httpStatus: number | null }
  | { status: 'failed'; httpStatus: number | null; error: string }
  | { status: 'retryable'; afterMs: number | null; httpStatus: number | null; error: string };

/** 408, 425, 429 and 5xx are worth another try; every other 4xx will not get better on its own. */
export function isRetryableHttpStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** The longest excerpt of a peer's error body kept in a result (bodies can be whole HTML pages). */
export const ERROR_BODY_EXCERPT_CHARS = 300;

/** HTTP status (+ Retry-After and body) → result. 2xx is delivered. */
export function classifyHttpResponse(
  status: number,
  retryAfter: string | null,
  bodyText: string,
  nowMs: number,
): DeliveryResult {
  if (status >= 200 && status < 300) return { status: 'delivered', httpStatus: status };
  const excerpt = bodyText.trim().slice(0, ERROR_BODY_EXCERPT_CHARS);
  const error = `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`;
  if (isRetryableHttpStatus(status))
    return { status: 'retryable', afterMs: parseRetryAfterMs(retryAfter, nowMs), httpStatus: status, error };
  return { status: 'failed', httpStatus: status, error };
}
