import { type BackoffOptions, retryDelayMs } from './backoff.ts';
import type { DeliveryResult } from './delivery-result.ts';

export interface RetryOptions extends BackoffOptions {
  maxAttempts: number;
  /** Stops retrying (and waiting) when aborted; the last result is returned. */
  signal: AbortSignal;
  /** Waits between attempts; injectable so tests can observe backoff without sleeping. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

/**
 * Runs `attempt` until it is delivered or failed, or `maxAttempts` ran, waiting `retryDelayMs`
 * between retryable attempts. An attempt that throws counts as retryable (a bug in a sender must not
 * lose the delivery silently). The in-memory counterpart of the alert outbox, which persists the
 * same schedule (`retryDelayMs`) between restarts.
 */
export async function deliverWithRetries(
  attempt: (signal: AbortSignal) => Promise<DeliveryResult>,
  options: RetryOptions,
): Promise<{ result: DeliveryResult; attempts: number }> {
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  let result: DeliveryResult = { status: 'failed', httpStatus: null, error: 'not attempted' };
  let attempts = 0;
  while (attempts < options.maxAttempts && !options.signal.aborted) {
    attempts += 1;
    try {
      result = await attempt(options.signal);
    } catch (error) {
      result = { status: 'retryable', afterMs: null, httpStatus: null, error: (error as Error).message };
    }
    if (result.status !== 'retryable' || attempts >= options.maxAttempts) break;
    await sleep(retryDelayMs(attempts, result, options, random), options.signal).catch(() => undefined);
  }
  return { result, attempts };
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
