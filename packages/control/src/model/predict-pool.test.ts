import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { FIXTURE_MS_PER_TOKEN as MS_PER_TOKEN, servedOn } from './served-on-fixture.ts';
import { createPoolModel, type PoolObservation, quantileCont } from './predict-pool.ts';
import { addSample, decayWeight, EMPTY_EWMA, EMPTY_MAX, maxAt, observeMax } from './forgetting.ts';

const S = 1_000_000_000n;

function observation(arrivals: RequestArrival[], replicas: number, sloMs = 1000): PoolObservation {
  return {
    arrivals,
    replicas,
    ratePerS: 10,
    msPerToken: MS_PER_TOKEN,
    sloMs,
    successShare: 1,
    usdPerReplicaHour: 4,
  };
}

const requests = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 400 }), tokens: fc.integer({ min: 1, max: 8000 }) }),
  { minLength: 5, maxLength: 150 },
);

describe('createPoolModel', () => {
  it('predicts exactly what was measured at the replica count and load it was measured on', () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 6 }), (reqs, replicas) => {
        const arrivals = servedOn(replicas, reqs);
        const model = createPoolModel(observation(arrivals, replicas))!;
        const p = model.predict(replicas);
        const measuredWithin = arrivals.filter((a) => a.ttftMs <= 1000).length / arrivals.length;
        expect(p.withinSloShare).toBeCloseTo(measuredWithin, 12);
        expect(p.ttftP95Ms).toBeCloseTo(
          quantileCont(
            arrivals.map((a) => a.ttftMs),
            0.95,
          ),
          6,
        );
      }),
    );
  });

  it('never predicts fewer requests within the SLO on more replicas, nor more under more load', () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        (reqs, replicas, load) => {
          const model = createPoolModel(observation(servedOn(replicas, reqs), replicas))!;
          for (let n = 1; n < 8; n++) {
            expect(model.predict(n + 1, load).withinSloShare).toBeGreaterThanOrEqual(
              model.predict(n, load).withinSloShare,
            );
            expect(model.predict(n, load * 1.5).withinSloShare).toBeLessThanOrEqual(
              model.predict(n, load).withinSloShare,
            );
          }
        },
      ),
    );
  });

  it('sees a queue drain on more replicas and build on fewer', () => {
    // Ten requests a second of 2,000-token prompts (400 ms of prefill each): four replicas keep up,
    // one does not.
    const reqs = Array.from({ length: 300 }, () => ({ gapMs: 100, tokens: 2000 }));
    const model = createPoolModel(observation(servedOn(4, reqs), 4))!;
    expect(model.predict(4).withinSloShare).toBe(1);
    expect(model.predict(1).withinSloShare).toBeLessThan(0.2);
    expect(model.predict(1).ttftP95Ms).toBeGreaterThan(10_000);
    expect(model.predict(4, 3).withinSloShare).toBeLessThan(model.predict(12, 3).withinSloShare);
    expect(model.predict(12, 3).withinSloShare).toBe(1);
  });

  it('knows what no replica count attains: prompts slower than the SLO on an idle replica', () => {
    const reqs = Array.from({ length: 100 }, (_, i) => ({ gapMs: 1000, tokens: i % 4 === 0 ? 10_000 : 500 }));
    const model = createPoolModel(observation(servedOn(2, reqs), 2))!;
    expect(model.attainableShare).toBeCloseTo(0.75, 12);
    expect(model.predict(50).withinSloShare).toBeCloseTo(0.75, 12);
  });

  it('prices replicas and counts only successful requests within the SLO as good', () => {
    const reqs = Array.from({ length: 50 }, () => ({ gapMs: 200, tokens: 100 }));
    const model = createPoolModel({ ...observation(servedOn(2, reqs), 2), successShare: 0.9 })!;
    const p = model.predict(3, 2);
    expect(p.usdPerHour).toBe(12);
    expect(p.goodTasksPerS).toBeCloseTo(10 * 2 * 0.9, 12);
    expect(p.uncertainty).toBeGreaterThan(0);
    expect(p.uncertainty).toBeLessThan(0.05);
  });
});

describe('quantileCont', () => {
  it('interpolates between ranks as DuckDB quantile_cont does', () => {
    expect(quantileCont([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileCont([10, 0, 20], 0.95)).toBeCloseTo(19, 12);
    expect(quantileCont([7], 0.95)).toBe(7);
  });
});

describe('estimators that forget', () => {
  it('halves a sample’s weight once per half-life of event time', () => {
    expect(decayWeight(60n * S, 60)).toBeCloseTo(0.5, 12);
    let ewma = addSample(EMPTY_EWMA, 10, 0n, 60);
    ewma = addSample(ewma, 20, 60n * S, 60);
    // 10 kept at half weight beside 20 at full: (5 + 20) / 1.5.
    expect(ewma.value).toBeCloseTo(25 / 1.5, 12);
    ewma = addSample(ewma, 20, 3600n * S, 60);
    expect(ewma.value).toBeCloseTo(20, 6);
  });

  it('lets a maximum fade unless it is seen again', () => {
    let max = observeMax(EMPTY_MAX, 8, 0n, 600);
    max = observeMax(max, 5, 60n * S, 600);
    expect(maxAt(max, 60n * S, 600)).toBeCloseTo(8 * 2 ** -0.1, 12);
    expect(maxAt(max, 6000n * S, 600)!).toBeLessThan(0.01);
    max = observeMax(max, 5, 6000n * S, 600);
    expect(maxAt(max, 6000n * S, 600)).toBe(5);
  });
});
