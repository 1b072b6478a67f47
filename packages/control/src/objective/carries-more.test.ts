import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIXTURE_MS_PER_TOKEN, servedOn } from '../model/served-on-fixture.ts';
import { createPoolModel } from '../model/predict-pool.ts';
import { carriesMore } from './carries-more.ts';

const requests = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 400 }), tokens: fc.integer({ min: 1, max: 8000 }) }),
  { minLength: 20, maxLength: 150 },
);

function modelOf(reqs: { gapMs: number; tokens: number }[], replicas: number) {
  return createPoolModel({
    arrivals: servedOn(replicas, reqs),
    replicas,
    ratePerS: 10,
    msPerToken: FIXTURE_MS_PER_TOKEN,
    sloMs: 1000,
    successShare: 1,
    usdPerReplicaHour: 4,
  })!;
}

describe('carriesMore', () => {
  it('a pool that carries a load carries any smaller one, and more replicas carry at least as much', () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 4 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (reqs, replicas, factor, shrink) => {
          const model = modelOf(reqs, replicas);
          const smaller = 1 + (factor - 1) * shrink;
          if (carriesMore(model, replicas, factor, 0.95).carries) {
            expect(carriesMore(model, replicas, smaller, 0.95).carries).toBe(true);
            expect(carriesMore(model, replicas + 1, factor, 0.95).carries).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a pool already short of what it must reach carries nothing more', () => {
    // Two replicas, a request every 100 ms that prefills for 400 ms: each waits behind the others.
    const reqs = Array.from({ length: 60 }, () => ({ gapMs: 100, tokens: 2000 }));
    const model = modelOf(reqs, 2);
    const now = carriesMore(model, 2, 1, 0.95);
    expect(now.prediction.withinSloShare).toBeLessThan(now.required);
    expect(now.carries).toBe(false);
    expect(carriesMore(model, 2, 1.2, 0.95).carries).toBe(false);
  });

  it('an idle pool carries twice its load, and the requirement is never above what its prompts attain', () => {
    // One request a second that prefills for 100 ms on three replicas: no one waits even at twice that.
    const idle = modelOf(
      Array.from({ length: 60 }, () => ({ gapMs: 1000, tokens: 500 })),
      3,
    );
    expect(carriesMore(idle, 3, 2, 0.95).carries).toBe(true);
    // A third of the prompts prefill for 1.2 s on an idle replica: only two thirds can be within 1 s.
    const long = modelOf(
      Array.from({ length: 60 }, (_, i) => ({ gapMs: 2000, tokens: i % 3 === 0 ? 6000 : 500 })),
      3,
    );
    const outlook = carriesMore(long, 3, 1, 0.95);
    expect(outlook.required).toBeCloseTo(2 / 3, 6);
    expect(outlook.carries).toBe(true);
  });
});
