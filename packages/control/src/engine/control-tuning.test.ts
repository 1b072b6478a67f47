import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { isFailing } from '../detectors/pool-signals.ts';
import {
  DEFAULT_TUNING,
  boundShare,
  engineFitMemoryWindows,
  engineMinBusyMs,
  retryStormRatio,
  trustedAfterSamples,
} from './control-tuning.ts';

const budget = 0.05;

describe('the internal knobs', () => {
  test('are at most eight', () => {
    expect(Object.keys(DEFAULT_TUNING).length).toBeLessThanOrEqual(8);
  });

  test('derive the bounds the detectors read, each between the knobs it comes from', () => {
    const t = DEFAULT_TUNING;
    // Queueing that at least doubles TTFT (slowRatio 2) is half of it.
    expect(boundShare(t)).toBeCloseTo(1 - 1 / t.slowRatio, 12);
    expect(retryStormRatio(t)).toBeGreaterThan(t.retryBudget);
    expect(trustedAfterSamples(t)).toBeGreaterThanOrEqual(1);
    expect(engineFitMemoryWindows(t)).toBeGreaterThan(trustedAfterSamples(t));
  });

  test('judge engine speed only with busy time well above what whole-percent GPU readings resolve', () => {
    const t = DEFAULT_TUNING;
    // Half a percentage point of a 30 s window on each of 4 replicas is 600 ms of reading error.
    const error = 0.005 * 30_000 * 4;
    expect(engineMinBusyMs(t, 30_000, 4) * (t.usualRatio - 1)).toBeCloseTo(error, 6);
    expect(engineMinBusyMs(t, 30_000, 8)).toBeGreaterThan(engineMinBusyMs(t, 30_000, 4));
  });
});

describe('failing: more failures than the error budget allows, surely', () => {
  test('a stray error or two at a few requests is noise; a clear excess is not', () => {
    expect(isFailing(2 / 10, 10, DEFAULT_TUNING, budget)).toBe(false);
    expect(isFailing(6 / 100, 100, DEFAULT_TUNING, budget)).toBe(false);
    expect(isFailing(8 / 20, 20, DEFAULT_TUNING, budget)).toBe(true);
    expect(isFailing(0.3, 1_000, DEFAULT_TUNING, budget)).toBe(true);
    expect(isFailing(null, 1_000, DEFAULT_TUNING, budget)).toBe(false);
    expect(isFailing(0.04, 100_000, DEFAULT_TUNING, budget)).toBe(false);
  });

  test('more failures at the same requests, or the same rate over more requests, never stops failing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: 1_000 }), (n, perMille) => {
        const rate = perMille / 1000;
        if (isFailing(rate, n, DEFAULT_TUNING, budget)) {
          expect(isFailing(Math.min(1, rate + 1 / n), n, DEFAULT_TUNING, budget)).toBe(true);
          expect(isFailing(rate, n * 4, DEFAULT_TUNING, budget)).toBe(true);
        }
      }),
    );
  });
});
