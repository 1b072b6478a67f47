import type { DeliveryResult } from './delivery-result.ts';

/** Each retry waits up to this many times longer than the one before. */
export const BACKOFF_MULTIPLIER = 2;
/** No single wait between attempts grows past this, unless the peer's Retry-After asks for more. */
export const MAX_BACKOFF_MS = 30_000;
/**
 * "Equal jitter": a wait is drawn between this share and all of the exponential step, so senders
 * that failed together do not all come back at the same instant, and none retries much too early.
 */
export const BACKOFF_JITTER_FLOOR = 0.5;

export interface BackoffOptions {
  initialBackoffMs: number;
  maxBackoffMs?: number;
}

/** Wait before retry number `retry` (1-based): min(max, initial × 2^(retry−1)), jittered. */
export function computeBackoffMs(retry: number, options: BackoffOptions, random: () => number): number {
  const cap = options.maxBackoffMs ?? MAX_BACKOFF_MS;
  const step = Math.min(cap, options.initialBackoffMs * BACKOFF_MULTIPLIER ** Math.max(0, retry - 1));
  return Math.round(step * BACKOFF_JITTER_FLOOR + random() * step * (1 - BACKOFF_JITTER_FLOOR));
}

/** Wait after a retryable attempt: the backoff, or the peer's Retry-After when that is longer. */
export function retryDelayMs(
  retry: number,
  result: Extract<DeliveryResult, { status: 'retryable' }>,
  options: BackoffOptions,
  random: () => number,
): number {
  return Math.max(computeBackoffMs(retry, options, random), result.afterMs ?? 0);
}
