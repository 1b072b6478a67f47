import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forecastLoad, loadOutlookPerS } from './forecast-load.ts';

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
