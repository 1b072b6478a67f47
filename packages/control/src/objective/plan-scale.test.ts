import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { planScale, type ScalePlanInputs } from './plan-scale.ts';

const MS_PER_TOKEN = 0.1;
const TOKENS = 1500; // 150 ms of prefill: one replica prefills about 6.7 requests/s

/** Five minutes of requests whose rate goes linearly from `from` to `to` requests/s, served without queueing. */
function ramp(from: number, to: number): RequestArrival[] {
  const out: RequestArrival[] = [];
  for (let t = 0; t < 300_000; ) {
    const rate = from + ((to - from) * t) / 300_000;
    out.push({ arriveMs: t, uncachedTokens: TOKENS, ttftMs: TOKENS * MS_PER_TOKEN + 30 });
    t += 1000 / rate;
  }
  return out;
}

function inputs(arrivals: RequestArrival[], from: number, to: number): ScalePlanInputs {
  const rateAt = (t: number) => from + ((to - from) * t) / 300;
  return {
    arrivals,
    replicas: 3,
    mainRatePerS: (from + to) / 2,
    mainWindowS: 300,
    fastRatePerS: (rateAt(240) + to) / 2,
    fastWindowS: 60,
    horizonS: 300,
    msPerToken: MS_PER_TOKEN,
    sloMs: 500,
    e2eSloMs: null,
    successShare: 1,
    usdPerReplicaHour: 8,
    kvUsage: null,
    attainmentTarget: 0.95,
    floor: 1,
    ceiling: 8,
  };
}

describe('planScale', () => {
  it('keeps the replicas a rising load will need by the time a scale-in would be verified', () => {
    // 6 → 10 requests/s: two replicas carry the five minutes just seen, not the five to come.
    const rising = planScale(inputs(ramp(6, 10), 6, 10))!;
    expect(rising.forecast.ratePerS).toBeGreaterThan(10);
    expect(rising.sizing.desired).toBeGreaterThanOrEqual(3);
    // The same mean load, flat: two replicas hold it.
    const flat = planScale(inputs(ramp(8, 8), 8, 8))!;
    expect(flat.sizing.desired).toBeLessThan(3);
    expect(flat.sizing.after.withinSloShare).toBeGreaterThanOrEqual(0.95 - flat.sizing.after.uncertainty);
  });

  it('replays a head-sampled pool at the rate the pool really receives', () => {
    // One request in ten traced: the sample alone would look like one replica's easy work.
    const sampled = ramp(8, 8).filter((_, k) => k % 10 === 0);
    const plan = planScale({ ...inputs(sampled, 8, 8), replicas: 2 })!;
    expect(plan.sizing.desired).toBe(2);
    expect(plan.sizing.before.withinSloShare).toBeGreaterThan(0.9);
    expect(
      planScale({ ...inputs(sampled, 8, 8), replicas: 2, mainRatePerS: 16, fastRatePerS: 16 })!.sizing
        .desired,
    ).toBeGreaterThan(2);
  });

  it('sizes for the share a shift taken with it moves onto the pool, which its window has not seen', () => {
    const flat = planScale(inputs(ramp(8, 8), 8, 8))!;
    const shifted = planScale({ ...inputs(ramp(8, 8), 8, 8), shareGain: 1.6 })!;
    expect(shifted.loadFactor).toBeCloseTo(flat.loadFactor * 1.6, 6);
    // 8 requests/s fit two replicas; 12.8 do not.
    expect(shifted.sizing.desired).toBeGreaterThan(flat.sizing.desired);
    // A shift moving traffic off it is not a reason for fewer replicas than the window's load needs.
    expect(planScale({ ...inputs(ramp(8, 8), 8, 8), shareGain: 0.5 })!.sizing.desired).toBe(
      flat.sizing.desired,
    );
  });

  it('sizes a burstier load of the same mean for at least as many replicas, and the dispersion reaches the sizing', () => {
    const flat = planScale(inputs(ramp(8, 8), 8, 8))!;
    let previous = flat;
    for (const dispersion of [2, 4, 8, 16, 32, 64]) {
      const bursty = planScale({ ...inputs(ramp(8, 8), 8, 8), dispersion })!;
      expect(bursty.loadFactor).toBeGreaterThan(previous.loadFactor);
      expect(bursty.sizing.desired).toBeGreaterThanOrEqual(previous.sizing.desired);
      previous = bursty;
    }
    // At 64× Poisson's variance the upper bound (8 standard errors of a Poisson count) needs a third.
    expect(previous.sizing.desired).toBeGreaterThan(flat.sizing.desired);
  });

  it('has nothing to say without a rate', () => {
    expect(planScale({ ...inputs(ramp(8, 8), 8, 8), mainRatePerS: 0 })).toBeNull();
    expect(planScale({ ...inputs([], 8, 8) })).toBeNull();
  });
});
