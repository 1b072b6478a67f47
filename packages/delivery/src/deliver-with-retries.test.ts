import { describe, expect, it } from 'vitest';
import { deliverWithRetries } from './deliver-with-retries.ts';
import type { DeliveryResult } from './delivery-result.ts';

const retryable = (afterMs: number | null = null): DeliveryResult => ({
  status: 'retryable',
  afterMs,
  httpStatus: 503,
  error: 'HTTP 503',
});

function scripted(results: DeliveryResult[]) {
  const calls: number[] = [];
  return {
    calls,
    attempt: async () => {
      calls.push(calls.length + 1);
      const next = results.shift();
      if (!next) throw new Error('no more scripted results');
      return next;
    },
  };
}

describe('deliverWithRetries', () => {
  it('retries retryable attempts with growing waits, honouring Retry-After, until delivered', async () => {
    const waits: number[] = [];
    const peer = scripted([
      retryable(),
      retryable(),
      retryable(10_000),
      { status: 'delivered', httpStatus: 200 },
    ]);
    const out = await deliverWithRetries(peer.attempt, {
      maxAttempts: 5,
      initialBackoffMs: 100,
      signal: new AbortController().signal,
      random: () => 1,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(out).toEqual({ result: { status: 'delivered', httpStatus: 200 }, attempts: 4 });
    expect(waits).toEqual([100, 200, 10_000]);
  });

  it('stops at the first final failure and after maxAttempts, and counts a throw as retryable', async () => {
    const sleep = async () => undefined;
    const signal = new AbortController().signal;
    const failed: DeliveryResult = { status: 'failed', httpStatus: 409, error: 'HTTP 409: conflict' };
    const once = scripted([failed, retryable()]);
    expect(
      await deliverWithRetries(once.attempt, { maxAttempts: 5, initialBackoffMs: 1, signal, sleep }),
    ).toEqual({
      result: failed,
      attempts: 1,
    });
    const down = scripted([retryable(), retryable(), retryable()]);
    const out = await deliverWithRetries(down.attempt, {
      maxAttempts: 3,
      initialBackoffMs: 1,
      signal,
      sleep,
    });
    expect(out).toMatchObject({ attempts: 3, result: { status: 'retryable' } });
    const broken = scripted([]);
    const thrown = await deliverWithRetries(broken.attempt, {
      maxAttempts: 2,
      initialBackoffMs: 1,
      signal,
      sleep,
    });
    expect(thrown).toMatchObject({
      attempts: 2,
      result: { status: 'retryable', error: 'no more scripted results' },
    });
  });

  it('does not start another attempt once aborted', async () => {
    const stop = new AbortController();
    const peer = scripted([retryable(), retryable()]);
    const out = await deliverWithRetries(peer.attempt, {
      maxAttempts: 5,
      initialBackoffMs: 1,
      signal: stop.signal,
      sleep: async () => stop.abort(),
    });
    expect(out.attempts).toBe(1);
    expect(peer.calls).toEqual([1]);
  });
});
