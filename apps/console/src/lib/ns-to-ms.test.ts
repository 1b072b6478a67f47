import { describe, expect, it } from 'vitest';
import { anyTimeToMs, nsToMs } from './ns-to-ms.ts';

describe('nsToMs', () => {
  it('keeps microseconds of a nanosecond timestamp past 2^53', () => {
    expect(nsToMs('1700000000123456789')).toBe(1_700_000_000_123.456);
    expect(nsToMs(1_700_000_000_123_456_789n)).toBe(1_700_000_000_123.456);
  });
  it('reads RFC 3339, epoch ms and epoch ns', () => {
    expect(anyTimeToMs('2025-01-01T00:00:00Z')).toBe(1_735_689_600_000);
    expect(anyTimeToMs(1_735_689_600_000)).toBe(1_735_689_600_000);
    expect(anyTimeToMs('1735689600000000000')).toBe(1_735_689_600_000);
    expect(anyTimeToMs('nope')).toBeNull();
  });
});
