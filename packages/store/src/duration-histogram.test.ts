import { describe, expect, it } from 'vitest';
import { createDurationHistogram, observeMs } from './duration-histogram.ts';

describe('a duration histogram', () => {
  it('puts an observation in the first bucket whose bound is not below it (Prometheus le), the rest above every bound', () => {
    const h = createDurationHistogram([0.01, 0.1, 1]);
    for (const ms of [2, 10, 10.5, 100, 999, 1000, 5000]) observeMs(h, ms);
    expect(h.counts).toEqual([2, 2, 2, 1]);
    expect(h.count).toBe(7);
    expect(h.sumS).toBeCloseTo(7.1215, 6);
  });
});
