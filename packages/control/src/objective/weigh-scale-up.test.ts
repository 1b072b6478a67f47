import { describe, expect, it } from 'vitest';
import { confidenceOf } from './confidence.ts';
import { type ScaleUpWeighing, weighScaleUpGain } from './weigh-scale-up.ts';

// A pool at 60 % goodput, most of its TTFT queueing, in a fleet earning 10 tasks within the SLO a
// second for $100 an hour; one more replica costs $8 an hour.
const base: ScaleUpWeighing = {
  goodput: 0.6,
  requests: 400,
  loadShare: 0.8,
  ceiling: 1,
  ratePerS: 5,
  fleetGoodPerS: 10,
  fleetUsdPerHour: 100,
  addedUsdPerHour: 8,
};

describe('weighScaleUpGain', () => {
  it('is surer than not exactly when the replicas pay for themselves', () => {
    for (const added of [1, 8, 20, 40, 60, 80, 120]) {
      for (const goodput of [0.1, 0.4, 0.6, 0.9]) {
        const w = weighScaleUpGain({ ...base, goodput, addedUsdPerHour: added });
        expect(w.beneficial).toBe(w.after >= w.before && w.gainPerS > 0);
        expect(w.z >= 0).toBe(w.beneficial);
      }
    }
  });

  it('grows less sure as the replicas cost more', () => {
    const zs = [2, 8, 20, 40, 80].map((added) => weighScaleUpGain({ ...base, addedUsdPerHour: added }).z);
    for (let i = 1; i < zs.length; i++) expect(zs[i]!).toBeLessThan(zs[i - 1]!);
  });

  it('is surer, either way, on more requests behind the same goodput', () => {
    const worth = (requests: number, added: number) =>
      confidenceOf(weighScaleUpGain({ ...base, requests, addedUsdPerHour: added }).z, requests);
    // Paying for itself: surer with more requests.
    expect(worth(2000, 8)).toBeGreaterThan(worth(40, 8));
    // Not paying for itself: less sure with more requests.
    expect(worth(2000, 20)).toBeLessThan(worth(40, 20));
  });

  it('wins nothing for a pool already at what it reaches when calm, or with no load in its TTFT', () => {
    for (const w of [
      weighScaleUpGain({ ...base, ceiling: 0.6 }),
      weighScaleUpGain({ ...base, ceiling: 0.3 }),
      weighScaleUpGain({ ...base, loadShare: 0 }),
    ]) {
      expect(w.gainPerS).toBe(0);
      expect(w.beneficial).toBe(false);
      expect(confidenceOf(w.z, base.requests)).toBe(0);
    }
  });

  it('wins nothing in a fleet with no task within the SLO when the pool reaches none', () => {
    const w = weighScaleUpGain({ ...base, goodput: 0, ceiling: 0, fleetGoodPerS: 0 });
    expect(w.before).toBe(0);
    expect(w.after).toBe(0);
    expect(w.beneficial).toBe(false);
  });
});
