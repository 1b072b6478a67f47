import { describe, expect, it } from 'vitest';
import { computeBackoffMs, MAX_BACKOFF_MS, retryDelayMs } from './backoff.ts';
import { classifyHttpResponse } from './delivery-result.ts';
import { parseRetryAfterMs } from './parse-retry-after.ts';

describe('classifyHttpResponse', () => {
  it('maps HTTP statuses to delivered | failed | retryable', () => {
    expect(classifyHttpResponse(200, null, '', 0)).toEqual({ status: 'delivered', httpStatus: 200 });
    expect(classifyHttpResponse(204, null, '', 0).status).toBe('delivered');
    expect(classifyHttpResponse(400, null, 'bad payload', 0)).toEqual({
      status: 'failed',
      httpStatus: 400,
      error: 'HTTP 400: bad payload',
    });
    for (const status of [401, 403, 404, 409, 422])
      expect(classifyHttpResponse(status, null, '', 0).status).toBe('failed');
    for (const status of [408, 425, 429, 500, 502, 503, 504])
      expect(classifyHttpResponse(status, null, '', 0).status).toBe('retryable');
    expect(classifyHttpResponse(503, '7', '', 0)).toMatchObject({ status: 'retryable', afterMs: 7000 });
  });

  it('keeps only an excerpt of a long error body', () => {
    const result = classifyHttpResponse(500, null, 'x'.repeat(10_000), 0);
    expect(result.status === 'retryable' && result.error.length).toBeLessThan(320);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads delay-seconds or an HTTP date', () => {
    expect(parseRetryAfterMs('120', 0)).toBe(120_000);
    expect(parseRetryAfterMs(' 3 ', 0)).toBe(3000);
    expect(parseRetryAfterMs('Thu, 01 Jan 1970 00:00:30 GMT', 10_000)).toBe(20_000);
    expect(parseRetryAfterMs('Thu, 01 Jan 1970 00:00:30 GMT', 60_000)).toBe(0);
    expect(parseRetryAfterMs('soon', 0)).toBeNull();
    expect(parseRetryAfterMs('-5', 0)).toBeNull();
    expect(parseRetryAfterMs(null, 0)).toBeNull();
  });
});

describe('backoff', () => {
  const options = { initialBackoffMs: 1000, maxBackoffMs: 30_000 };

  it('doubles per retry, between half and all of the step (equal jitter)', () => {
    expect(computeBackoffMs(1, options, () => 0)).toBe(500);
    expect(computeBackoffMs(1, options, () => 1)).toBe(1000);
    expect(computeBackoffMs(3, options, () => 0)).toBe(2000);
    expect(computeBackoffMs(3, options, () => 1)).toBe(4000);
  });

  it('never exceeds the maximum, which defaults to MAX_BACKOFF_MS', () => {
    expect(computeBackoffMs(40, options, () => 1)).toBe(30_000);
    expect(computeBackoffMs(40, options, () => 0)).toBe(15_000);
    expect(computeBackoffMs(40, { initialBackoffMs: 500 }, () => 1)).toBe(MAX_BACKOFF_MS);
  });

  it("waits for the peer's Retry-After when it asks for longer than the backoff", () => {
    const result = { status: 'retryable', afterMs: 9000, httpStatus: 429, error: 'HTTP 429' } as const;
    expect(retryDelayMs(1, result, options, () => 1)).toBe(9000);
    expect(retryDelayMs(1, { ...result, afterMs: 10 }, options, () => 1)).toBe(1000);
  });
});
