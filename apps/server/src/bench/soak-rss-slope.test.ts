import { describe, expect, it } from 'vitest';
import { perMinuteMedians, slopePerMin } from './soak-run.ts';

describe("the soak's RSS trend", () => {
  it('reads a plateau with noise as about flat and a steady climb as its rate', () => {
    const plateau = [1600, 1720, 1580, 1700, 1610, 1690].map((rssMiB, i) => ({ atS: 300 + 30 * i, rssMiB }));
    expect(Math.abs(slopePerMin(plateau)!)).toBeLessThan(30);
    const leak = [1000, 1050, 1100, 1150, 1200].map((rssMiB, i) => ({ atS: 300 + 30 * i, rssMiB }));
    expect(slopePerMin(leak)).toBeCloseTo(100, 5);
    expect(slopePerMin(leak.slice(0, 2))).toBeNull();
  });

  it('summarises each minute by its median, so one sample taken mid-swing does not set the minute', () => {
    const samples = [0, 2, 4, 58, 60, 62, 64].map((atS, i) => ({
      atS,
      rssMiB: [1000, 1900, 1010, 1020, 1500, 1510, 1490][i]!,
    }));
    expect(perMinuteMedians(samples, 3)).toEqual([1015, 1500, null]);
  });
});
