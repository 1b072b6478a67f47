import { describe, expect, it } from 'vitest';
import { quantileCont, quantileContOfSorted } from './quantile-cont.ts';

describe('quantileCont (DuckDB quantile_cont)', () => {
  it('interpolates linearly between the two closest ranks at position q·(n−1)', () => {
    expect(quantileCont([4, 1, 3, 2], 0.5)).toBe(2.5);
    expect(quantileCont([50, 10, 40, 20, 30], 0.95)).toBeCloseTo(48, 10);
    expect(quantileCont([7], 0.99)).toBe(7);
  });

  it('runs from the minimum at 0 to the maximum at 1 without decreasing, and is NaN for no values', () => {
    const values = [5, 3, 9, 1, 12, 7, 7, 2];
    expect(quantileCont(values, 0)).toBe(1);
    expect(quantileCont(values, 1)).toBe(12);
    let previous = Number.NEGATIVE_INFINITY;
    for (let q = 0; q <= 1; q += 0.01) {
      const v = quantileCont(values, q);
      expect(v).toBeGreaterThanOrEqual(previous);
      previous = v;
    }
    expect(quantileCont([], 0.5)).toBeNaN();
  });

  it('gives the same answer for sorted input as for any order', () => {
    const values = [0.3, 9.1, 4.4, 4.4, 2.0, 7.5];
    const sorted = [...values].sort((a, b) => a - b);
    for (const q of [0.05, 0.5, 0.95, 0.99])
      expect(quantileContOfSorted(sorted, q)).toBe(quantileCont(values, q));
  });
});
