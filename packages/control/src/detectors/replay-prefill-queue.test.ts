import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayPrefillWaits } from './replay-prefill-queue.ts';

describe('replayPrefillWaits', () => {
  it('holds every prompt behind a long one on a lone replica, and none when a second replica is free', () => {
    const arrivals = [{ arriveMs: 0 }, { arriveMs: 1000 }, { arriveMs: 2000 }];
    const service = [45_000, 200, 200];
    expect([...replayPrefillWaits(arrivals, service, 1)]).toEqual([0, 44_000, 43_200]);
    expect([...replayPrefillWaits(arrivals, service, 2)]).toEqual([0, 0, 0]);
  });

  it('never makes a request wait longer on more replicas (so the fewest that hold the SLO can be bisected)', () => {
    const request = fc.record({
      gapMs: fc.integer({ min: 0, max: 5000 }),
      serviceMs: fc.integer({ min: 1, max: 60_000 }),
    });
    fc.assert(
      fc.property(
        fc.array(request, { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 12 }),
        (reqs, c) => {
          const arrivals: { arriveMs: number }[] = [];
          for (const r of reqs) arrivals.push({ arriveMs: (arrivals.at(-1)?.arriveMs ?? 0) + r.gapMs });
          const service = reqs.map((r) => r.serviceMs);
          const fewer = replayPrefillWaits(arrivals, service, c);
          const more = replayPrefillWaits(arrivals, service, c + 1);
          return more.every((w, i) => w <= fewer[i]!);
        },
      ),
    );
  });

  it('replays a count that changes within the sample: as before until the change, between the two counts after it', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gapMs: fc.integer({ min: 0, max: 400 }),
            serviceMs: fc.integer({ min: 1, max: 3000 }),
          }),
          {
            minLength: 1,
            maxLength: 120,
          },
        ),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (reqs, before, after, at) => {
          const arrivals: { arriveMs: number }[] = [];
          for (const r of reqs) arrivals.push({ arriveMs: (arrivals.at(-1)?.arriveMs ?? 0) + r.gapMs });
          const service = reqs.map((r) => r.serviceMs);
          const changeMs = at * arrivals.at(-1)!.arriveMs;
          const steps = [
            { fromMs: Number.NEGATIVE_INFINITY, replicas: before },
            { fromMs: changeMs, replicas: after },
          ];
          const waits = replayPrefillWaits(arrivals, service, steps);
          const onBefore = replayPrefillWaits(arrivals, service, before);
          const onFewer = replayPrefillWaits(arrivals, service, Math.min(before, after));
          arrivals.forEach((a, i) => {
            if (a.arriveMs < changeMs) expect(waits[i]).toBe(onBefore[i]);
            // Never a wait longer than on the smaller count throughout; after a scale-in, never a
            // shorter one than on the larger count it had.
            expect(waits[i]!).toBeLessThanOrEqual(onFewer[i]! + 1e-9);
            if (after < before) expect(waits[i]!).toBeGreaterThanOrEqual(onBefore[i]! - 1e-9);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
