import { describe, expect, it } from 'vitest';
import { MISSING, formatBytes, formatCount, formatTtlHours } from './format.ts';

describe('formatBytes', () => {
  it('uses binary units with one decimal below 100', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(262_144)).toBe('256 KiB');
    expect(formatBytes(12.5 * 2 ** 20)).toBe('12.5 MiB');
    expect(formatBytes(3 * 2 ** 30)).toBe('3.0 GiB');
    expect(formatBytes(2 ** 50)).toBe('1024 TiB');
    expect(formatBytes(null)).toBe(MISSING);
  });
});

describe('formatCount', () => {
  it('keeps every digit', () => {
    expect(formatCount(1_234_567)).toBe('1,234,567');
    expect(formatCount(0)).toBe('0');
    expect(formatCount(undefined)).toBe(MISSING);
  });
});

describe('formatTtlHours', () => {
  it('reads 0 as forever and picks minutes, hours or days', () => {
    expect(formatTtlHours(0)).toBe('forever');
    expect(formatTtlHours(0.05)).toBe('3 min');
    expect(formatTtlHours(6)).toBe('6 h');
    expect(formatTtlHours(36)).toBe('36 h');
    expect(formatTtlHours(168)).toBe('7 d');
    expect(formatTtlHours(1.5)).toBe('1.5 h');
  });
});
