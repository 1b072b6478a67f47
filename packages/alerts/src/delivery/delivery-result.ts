/** The outcome of one delivery attempt; expected failures are values, not throws. */
export type DeliveryResult =
  | { outcome: 'ok'; httpStatus: number }
  | { outcome: 'failed'; httpStatus: number | null; error: string }
  | { outcome: 'retryable'; afterMs: number | null; httpStatus: number | null; error: string };

/** HTTP status → outcome. 408, 425, 429 and 5xx are worth retrying; other 4xx will not get better. */
export function classifyResponse(
  status: number,
  retryAfter: string | null,
  bodyText: string,
  nowMs: number,
): DeliveryResult {
  if (status >= 200 && status < 300) return { outcome: 'ok', httpStatus: status };
  const snippet = bodyText.trim().slice(0, 300);
  const error = `HTTP ${status}${snippet ? `: ${snippet}` : ''}`;
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    return { outcome: 'retryable', afterMs: parseRetryAfterMs(retryAfter, nowMs), httpStatus: status, error };
  }
  return { outcome: 'failed', httpStatus: status, error };
}

/** Retry-After as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfterMs(value: string | null, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * Exponential backoff with "equal jitter": the n-th retry waits between half and all of
 * min(max, initial × 2^(n−1)), so receivers coming back are not hit by every sender at once.
 */
export function computeBackoffMs(
  retry: number,
  options: { initialBackoffMs: number; maxBackoffMs: number },
  random: () => number,
): number {
  const capped = Math.min(options.maxBackoffMs, options.initialBackoffMs * 2 ** Math.max(0, retry - 1));
  return Math.round(capped / 2 + random() * (capped / 2));
}
