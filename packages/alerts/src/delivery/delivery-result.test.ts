import { describe, expect, it } from 'vitest';
import { classifyResponse, computeBackoffMs, parseRetryAfterMs } from './delivery-result.ts';

describe('classifyResponse', () => {
  it('maps HTTP statuses to ok | failed | retryable', () => {
    expect(classifyResponse(200, null, '', 0)).toEqual({ outcome: 'ok', httpStatus: 200 });
    expect(classifyResponse(204, null, '', 0).outcome).toBe('ok');
    expect(classifyResponse(400, null, 'bad payload', 0)).toEqual({
      outcome: 'failed',
      httpStatus: 400,
      error: 'HTTP 400: bad payload',
    });
    expect(classifyResponse(404, null, 'no_service', 0).outcome).toBe('failed');
    for (const status of [408, 425, 429, 500, 502, 503, 504]) {
      expect(classifyResponse(status, null, '', 0).outcome).toBe('retryable');
    }
    expect(classifyResponse(503, '7', '', 0)).toMatchObject({ outcome: 'retryable', afterMs: 7000 });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfterMs('120', 0)).toBe(120_000);
    expect(parseRetryAfterMs('Thu, 01 Jan 1970 00:00:30 GMT', 10_000)).toBe(20_000);
    expect(parseRetryAfterMs('soon', 0)).toBeNull();
    expect(parseRetryAfterMs(null, 0)).toBeNull();
  });
});

describe('computeBackoffMs', () => {
  const options = { initialBackoffMs: 1000, maxBackoffMs: 30_000 };

  it('doubles per retry between half and all of the cap (equal jitter)', () => {
    expect(computeBackoffMs(1, options, () => 0)).toBe(500);
    expect(computeBackoffMs(1, options, () => 1)).toBe(1000);
    expect(computeBackoffMs(3, options, () => 0)).toBe(2000);
    expect(computeBackoffMs(3, options, () => 1)).toBe(4000);
  });

  it('never exceeds the maximum', () => {
    expect(computeBackoffMs(40, options, () => 1)).toBe(30_000);
    expect(computeBackoffMs(40, options, () => 0)).toBe(15_000);
  });
});
