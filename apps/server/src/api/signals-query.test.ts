import { describe, expect, it } from 'vitest';
import { parseGroupBy, parseRfc3339Ns, parseWindowMs } from './signals-query.ts';

describe('query parsing for the signals routes', () => {
  it('reads RFC 3339 times to the nanosecond, with Z or an offset', () => {
    expect(parseRfc3339Ns('2026-01-01T00:00:00Z', 'at')).toBe(1_767_225_600_000_000_000n);
    expect(parseRfc3339Ns('2026-01-01T00:00:00.000000001Z', 'at')).toBe(1_767_225_600_000_000_001n);
    expect(parseRfc3339Ns('2026-01-01T02:00:00.25+02:00', 'at')).toBe(1_767_225_600_250_000_000n);
    expect(parseRfc3339Ns('2026-01-01t00:00:00z', 'at')).toBe(1_767_225_600_000_000_000n);
  });

  it.each([
    '2026-01-01',
    '2026-01-01 00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '1767225600',
    'now',
  ])('rejects %s with a message naming the parameter', (text) => {
    expect(() => parseRfc3339Ns(text, 'from')).toThrow(/from: .* is not an RFC 3339 time/);
  });

  it('reads durations and group-by lists', () => {
    expect(parseWindowMs('1h30m', 'window', '5m')).toBe(5_400_000);
    expect(parseWindowMs(undefined, 'window', '5m')).toBe(300_000);
    expect(parseGroupBy('pool, model')).toEqual(['pool', 'model']);
    expect(parseGroupBy('')).toEqual([]);
    expect(() => parseGroupBy('pool,zone')).toThrow(/"zone" is not a group dimension/);
  });
});
