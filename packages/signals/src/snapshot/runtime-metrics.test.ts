import { describe, expect, it } from 'vitest';
import { histogramQuantile } from './runtime-metrics.ts';

describe('histogramQuantile (Prometheus histogram_quantile)', () => {
  it('interpolates linearly inside the bucket that holds the rank, the first bucket from 0', () => {
    // 10 in (0, 1], 10 in (1, 2], 0 above 2.
    expect(histogramQuantile([1, 2], [10, 10, 0], 0.5)).toBeCloseTo(1, 9);
    expect(histogramQuantile([1, 2], [10, 10, 0], 0.25)).toBeCloseTo(0.5, 9);
    expect(histogramQuantile([1, 2], [10, 10, 0], 0.75)).toBeCloseTo(1.5, 9);
  });

  it('reads a rank in the open-ended bucket as the last bound, and an empty histogram as no value', () => {
    expect(histogramQuantile([1, 2], [0, 0, 5], 0.99)).toBe(2);
    expect(histogramQuantile([1, 2], [0, 0, 0], 0.5)).toBeNull();
  });

  it('is monotone in q', () => {
    const counts = [3, 0, 7, 11, 2, 1];
    const bounds = [0.01, 0.05, 0.1, 0.5, 1];
    let last = -1;
    for (let q = 0.01; q <= 1; q += 0.01) {
      const v = histogramQuantile(bounds, counts, q)!;
      expect(v).toBeGreaterThanOrEqual(last);
      last = v;
    }
  });
});
