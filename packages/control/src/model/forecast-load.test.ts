import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { demandDispersion, forecastLoad, loadDispersion, loadOutlookPerS } from './forecast-load.ts';

const windows = (older: number, fast: number) => ({
  // A 300 s control window whose last 60 s ran at `fast` and the 240 s before at `older`.
  mainRatePerS: (older * 240 + fast * 60) / 300,
  mainWindowS: 300,
  fastRatePerS: fast,
  fastWindowS: 60,
});

describe('forecastLoad', () => {
  it('extrapolates a rising ramp over the lead time, so a scale-in is not sized for the past', () => {
    const f = forecastLoad(windows(10, 14), 300);
    // 4 req/s more over 150 s between the midpoints; 330 s on from the short window's midpoint.
    expect(f.slopePerS2).toBeCloseTo(4 / 150, 9);
    expect(f.ratePerS).toBeCloseTo(14 + (4 / 150) * 330, 9);
    expect(f.ratePerS).toBeGreaterThan(14);
  });

  it('forecasts a flat load as itself, with an error that shrinks with more requests', () => {
    const few = forecastLoad(windows(1, 1), 300);
    const many = forecastLoad(windows(100, 100), 300);
    expect(few.ratePerS).toBeCloseTo(1, 9);
    expect(many.ratePerS).toBeCloseTo(100, 9);
    expect(many.stdErrPerS / many.ratePerS).toBeLessThan(few.stdErrPerS / few.ratePerS);
  });

  it('never forecasts a negative rate, and forecasts more for a steeper rise', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.double({ min: 0, max: 900, noNaN: true }),
        (older, fast, lead) => {
          const f = forecastLoad(windows(older, fast), lead);
          expect(f.ratePerS).toBeGreaterThanOrEqual(0);
          expect(forecastLoad(windows(older, fast + 1), lead).ratePerS).toBeGreaterThanOrEqual(f.ratePerS);
        },
      ),
    );
  });
});

describe('loadOutlookPerS', () => {
  it('is never below a rate seen now, and above a flat load by its noise', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.double({ min: 0, max: 900, noNaN: true }),
        (older, fast, horizon) => {
          const w = windows(older, fast);
          const { ratePerS } = loadOutlookPerS(w, horizon);
          expect(ratePerS).toBeGreaterThanOrEqual(Math.max(w.fastRatePerS, w.mainRatePerS));
        },
      ),
    );
    const flat = loadOutlookPerS(windows(2, 2), 300);
    expect(flat.ratePerS).toBeGreaterThan(2);
    expect(flat.ratePerS).toBeCloseTo(2 + flat.forecast.stdErrPerS, 9);
  });

  it('holds a decision to a rising load for longer the later it is verified', () => {
    const soon = loadOutlookPerS(windows(10, 14), 60).ratePerS;
    const late = loadOutlookPerS(windows(10, 14), 600).ratePerS;
    expect(late).toBeGreaterThan(soon);
    expect(soon).toBeGreaterThan(14);
  });
});

describe('loadDispersion', () => {
  it('is 1 for evenly spread requests and grows when they come in bursts', () => {
    // 300 s window, 30 s bins, 3 requests a bin, evenly.
    const even = Array.from({ length: 30 }, (_, i) => i * 10_000 + 5_000);
    expect(loadDispersion(even, 300_000, 300_000, 30_000, 1)).toBe(1);
    // The same 30 requests, all in two bins.
    const bursty = Array.from({ length: 30 }, (_, i) => (i < 15 ? 1_000 + i : 200_000 + i));
    expect(loadDispersion(bursty, 300_000, 300_000, 30_000, 1)).toBeGreaterThan(5);
    // A 1-in-4 sample of a bursty load shows a quarter of the excess; it is scaled back.
    expect(loadDispersion(bursty, 300_000, 300_000, 30_000, 4)).toBeGreaterThan(
      loadDispersion(bursty, 300_000, 300_000, 30_000, 1),
    );
  });

  it('does not count a steady trend as burstiness: the forecast already extrapolates it', () => {
    // Counts rising 2, 4, …, 20 per 30 s bin: a ramp, not bursts.
    const ramp: number[] = [];
    for (let bin = 0; bin < 10; bin++) {
      const n = 2 * (bin + 1);
      for (let k = 0; k < n; k++) ramp.push(bin * 30_000 + ((k + 0.5) * 30_000) / n);
    }
    expect(loadDispersion(ramp, 300_000, 300_000, 30_000, 1)).toBe(1);
    // The same requests with the bins shuffled are as many, but bursty.
    const order = [9, 0, 8, 1, 7, 2, 6, 3, 5, 4];
    const shuffled = ramp.map((t) => {
      const bin = Math.floor(t / 30_000);
      return order[bin]! * 30_000 + (t % 30_000);
    });
    expect(loadDispersion(shuffled, 300_000, 300_000, 30_000, 1)).toBeGreaterThan(3);
  });

  it('is 1 until three control intervals have been seen, and reads only what the telemetry covers', () => {
    const bursty = Array.from({ length: 30 }, (_, i) => (i < 15 ? 250_000 + i : 290_000 + i));
    expect(loadDispersion(bursty, 300_000, 60_000, 30_000, 1)).toBe(1);
    // Covered for the last 90 s only: the empty bins before the store began are not a lull.
    expect(loadDispersion(bursty, 300_000, 90_000, 30_000, 1)).toBeLessThan(
      loadDispersion(bursty, 300_000, 300_000, 30_000, 1),
    );
  });

  it('widens the forecast error by its square root', () => {
    const w = windows(10, 10);
    const poisson = forecastLoad(w, 300).stdErrPerS;
    expect(forecastLoad({ ...w, dispersion: 4 }, 300).stdErrPerS).toBeCloseTo(2 * poisson, 9);
  });
});

describe('demandDispersion', () => {
  // Ten 30 s intervals of a steady 20 first attempts each; in the fourth, a failure's 60 retries.
  const steady = Array.from({ length: 200 }, (_, i) => ({ arriveMs: i * 1500 + 750 }));
  const echo = Array.from({ length: 60 }, (_, i) => ({ arriveMs: 90_000 + i * 500, attempt: 2 }));
  const rate = (n: number) => n / 300;

  it("reads a retry storm's burst as no burstiness of the demand", () => {
    const withRetries = [...steady, ...echo].sort((a, b) => a.arriveMs - b.arriveMs);
    expect(demandDispersion(withRetries, 300_000, 300_000, 30_000, rate(withRetries.length))).toBe(1);
    // The same requests as first attempts are a burst of demand.
    const asDemand = withRetries.map((a) => ({ arriveMs: a.arriveMs }));
    expect(demandDispersion(asDemand, 300_000, 300_000, 30_000, rate(asDemand.length))).toBeGreaterThan(5);
  });

  it('reads thinning from all the requests, retries included', () => {
    // Every request seen (none thinned), half of them retries spread evenly: the demand's dispersion
    // is that of its first attempts as they are, not scaled up as if half the requests were unseen.
    const bursty = Array.from({ length: 100 }, (_, i) => ({ arriveMs: (i < 50 ? 10_000 : 200_000) + i }));
    const retries = Array.from({ length: 100 }, (_, i) => ({ arriveMs: i * 3000 + 1500, attempt: 2 }));
    const seen = [...bursty, ...retries];
    const asIs = loadDispersion(
      bursty.map((a) => a.arriveMs),
      300_000,
      300_000,
      30_000,
      1,
    );
    expect(asIs).toBeGreaterThan(5);
    expect(demandDispersion(seen, 300_000, 300_000, 30_000, rate(seen.length))).toBeCloseTo(asIs, 9);
  });
});
