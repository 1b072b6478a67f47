import { describe, expect, it } from 'vitest';
import { chooseStepMs, formatDurationParam, resolveTimeRange, toNsLiteral } from './time-range.ts';

const anchor = Date.parse('2025-03-01T12:00:00Z');

describe('resolveTimeRange', () => {
  it('ends a preset at the newest event time', () => {
    const range = resolveTimeRange({ range: '1h' }, anchor);
    expect(range).toMatchObject({ key: '1h', toMs: anchor, fromMs: anchor - 3_600_000 });
  });

  it('uses an absolute from/to over a preset', () => {
    const range = resolveTimeRange(
      { range: '1h', from: '2025-03-01T10:00:00Z', to: '2025-03-01T10:30:00Z' },
      anchor,
    );
    expect(range.key).toBe('custom');
    expect(range.toMs - range.fromMs).toBe(30 * 60_000);
  });

  it('falls back to 15 minutes for an unknown preset or a backwards range', () => {
    expect(resolveTimeRange({ range: 'forever' }, anchor).key).toBe('15m');
    expect(resolveTimeRange({ from: '2025-03-01T11:00:00Z', to: '2025-03-01T10:00:00Z' }, anchor).key).toBe(
      '15m',
    );
  });
});

describe('steps and durations', () => {
  it('picks a round step for about 60 points', () => {
    expect(chooseStepMs(15 * 60_000)).toBe(15_000);
    expect(chooseStepMs(3_600_000)).toBe(60_000);
    expect(chooseStepMs(24 * 3_600_000)).toBe(1_800_000);
  });

  it('formats durations the API parses', () => {
    expect(formatDurationParam(90_000)).toBe('1m30s');
    expect(formatDurationParam(3_600_000)).toBe('1h');
    expect(formatDurationParam(86_400_000 + 1000)).toBe('1d1s');
  });

  it('makes exact nanosecond literals', () => {
    expect(toNsLiteral(1_700_000_000_123)).toBe('1700000000123000000');
  });
});
