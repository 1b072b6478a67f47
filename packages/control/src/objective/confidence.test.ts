import { describe, expect, it } from 'vitest';
import { allOf, anyOf, confidenceOf, predictionZ, ratioZ, shareDifferenceZ, shareZ } from './confidence.ts';

describe('confidence as the probability that what a recommendation rests on holds', () => {
  it('is as likely as not at the bound, and grows with the distance past it', () => {
    expect(confidenceOf(0, 1000)).toBe(0.5);
    let last = 0;
    for (const z of [-3, -1, 0, 0.5, 1, 2, 3]) {
      const c = confidenceOf(z, 1000);
      expect(c).toBeGreaterThanOrEqual(last);
      last = c;
    }
    expect(confidenceOf(-2, 1000)).toBeLessThan(0.5);
    expect(confidenceOf(2, 1000)).toBeGreaterThan(0.95);
  });

  it('is never certain, and less sure on fewer observations however far past the bound', () => {
    for (const n of [0, 1, 5, 20, 80, 10_000]) {
      const c = confidenceOf(Number.POSITIVE_INFINITY, n);
      expect(c).toBeLessThan(1);
      expect(c).toBeLessThanOrEqual((n + 1) / (n + 2));
    }
    expect(confidenceOf(Number.POSITIVE_INFINITY, 5)).toBeLessThan(
      confidenceOf(Number.POSITIVE_INFINITY, 80),
    );
    // Nothing observed: as likely as not.
    expect(confidenceOf(Number.POSITIVE_INFINITY, 0)).toBe(0.5);
    // A sample that is not a number counts as none: never a confidence a gate would wave through.
    expect(confidenceOf(Number.POSITIVE_INFINITY, Number.NaN)).toBe(0.5);
    expect(confidenceOf(Number.NaN, 100)).toBe(0.5);
  });

  it('reads a reading past its bound on the side the action needs as positive, and surer on more requests', () => {
    expect(ratioZ(1.5, 1, 20, 'above')).toBeGreaterThan(0);
    expect(ratioZ(1.5, 1, 20, 'below')).toBeLessThan(0);
    expect(ratioZ(0.5, 1, 20, 'below')).toBeGreaterThan(0);
    expect(ratioZ(1.5, 1, 80, 'above')).toBeGreaterThan(ratioZ(1.5, 1, 20, 'above'));
    expect(ratioZ(2, 1, 20, 'above')).toBeGreaterThan(ratioZ(1.5, 1, 20, 'above'));
    expect(ratioZ(0, 1, 20, 'below')).toBe(Number.POSITIVE_INFINITY);
    expect(ratioZ(1, 1, 20, 'above')).toBe(0);
  });

  it('tests a share against its bound with the binomial error, so one error in ten requests is not a failing pool', () => {
    // 1 of 10 failing against a 5 % budget: not surely past it.
    expect(confidenceOf(shareZ(0.1, 0.05, 10, 'above'), 10)).toBeLessThan(0.9);
    // 100 of 1000: surely.
    expect(confidenceOf(shareZ(0.1, 0.05, 1000, 'above'), 1000)).toBeGreaterThanOrEqual(0.99);
    expect(shareZ(0.02, 0.05, 100, 'below')).toBeGreaterThan(0);
    // A bound of 0 still has an error.
    expect(Number.isFinite(shareZ(0.01, 0, 50, 'above'))).toBe(true);
  });

  it('tests a difference of two shares against a gap', () => {
    expect(shareDifferenceZ(0.9, 200, 0.5, 200, 0.2)).toBeGreaterThan(2);
    expect(shareDifferenceZ(0.6, 200, 0.5, 200, 0.2)).toBeLessThan(0);
    expect(shareDifferenceZ(0.9, 500, 0.5, 500, 0.2)).toBeGreaterThan(
      shareDifferenceZ(0.9, 50, 0.5, 50, 0.2),
    );
  });

  it('weighs a prediction in its own standard error', () => {
    expect(predictionZ(0.95, 0.9, 0.025)).toBeCloseTo(2, 6);
    expect(predictionZ(0.9, 0.9, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(predictionZ(0.89, 0.9, 0)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('is no surer of a conjunction than of its least sure part, and as sure of a disjunction as of its surest', () => {
    expect(allOf(3, 0.5, 2)).toBe(0.5);
    expect(anyOf(Number.NaN, -1, 2)).toBe(2);
    expect(anyOf(Number.NaN)).toBe(0);
  });
});
