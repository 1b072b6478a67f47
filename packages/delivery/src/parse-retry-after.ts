/**
 * Retry-After (RFC 9110 §10.2.3) as delay-seconds or an HTTP date, in ms from `nowMs`; null when
 * absent or unreadable. A date in the past is 0 (retry now), never negative.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its day and month; Date.parse would also read '-5' as a year.
  if (!/[a-z]{3}/i.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
