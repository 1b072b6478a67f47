import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { FIXTURE_MS_PER_TOKEN as MS_PER_TOKEN, finishedBy, servedOn } from './served-on-fixture.ts';
import { createPoolModel, type PoolObservation, quantileCont } from './predict-pool.ts';
import { replayPrefillWaits } from '../detectors/replay-prefill-queue.ts';
import { addSample, decayWeight, EMPTY_EWMA, EMPTY_MAX, maxAt, observeMax } from './forgetting.ts';

const S = 1_000_000_000n;

function observation(
  arrivals: RequestArrival[],
  replicas: number,
  sloMs: number | null = 1000,
  e2eSloMs: number | null = null,
): PoolObservation {
  return {
    arrivals,
    replicas,
    ratePerS: 10,
    msPerToken: MS_PER_TOKEN,
    sloMs,
    e2eSloMs,
    successShare: 1,
    usdPerReplicaHour: 4,
  };
}

const requests = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 400 }), tokens: fc.integer({ min: 1, max: 8000 }) }),
  { minLength: 5, maxLength: 150 },
);
/** Requests with a decode after the first token, so their e2e is more than their TTFT. */
const decodingRequests = fc.array(
  fc.record({
    gapMs: fc.integer({ min: 0, max: 400 }),
    tokens: fc.integer({ min: 1, max: 8000 }),
    decodeMs: fc.integer({ min: 0, max: 6000 }),
  }),
  { minLength: 5, maxLength: 150 },
);
/** A TTFT SLO, an e2e SLO, or both (never neither). */
const slos = fc.oneof(
  fc.record({ ttft: fc.constant(1000), e2e: fc.constant(null) }),
  fc.record({ ttft: fc.constant(null), e2e: fc.integer({ min: 500, max: 6000 }) }),
  fc.record({ ttft: fc.constant(1000), e2e: fc.integer({ min: 500, max: 6000 }) }),
);

describe('createPoolModel', () => {
  it("is no more optimistic about today's replicas for a sample served partly on more of them", () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 2, max: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (reqs, before, at) => {
          const now = before - 1;
          // Requests as the larger count served them, the count dropping partway through the sample.
          const arrivals = servedOn(before, reqs);
          const changeMs = arrivals[0]!.arriveMs + at * (arrivals.at(-1)!.arriveMs - arrivals[0]!.arriveMs);
          const steps = [
            { fromMs: Number.NEGATIVE_INFINITY, replicas: before },
            { fromMs: changeMs, replicas: now },
          ];
          const served = createPoolModel({ ...observation(arrivals, now), servedOn: steps })!;
          const taken = createPoolModel(observation(arrivals, now))!;
          for (const n of [now, now + 1]) {
            expect(served.predict(n).ttftP95Ms).toBeGreaterThanOrEqual(taken.predict(n).ttftP95Ms - 1e-9);
            expect(served.predict(n).withinSloShare).toBeLessThanOrEqual(
              taken.predict(n).withinSloShare + 1e-12,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sees the queue a scale-in brought once the sample was served on more replicas until just now', () => {
    // 2,000-token prompts (400 ms of prefill) arriving 0–470 ms apart: three replicas serve them with
    // next to no queueing, two at 85 % busy queue some. Served on three until the last tenth of the
    // sample, then on two.
    const reqs = Array.from({ length: 200 }, (_, i) => ({ gapMs: (i * 197) % 471, tokens: 2000 }));
    const arrivals = servedOn(3, reqs);
    const steps = [
      { fromMs: Number.NEGATIVE_INFINITY, replicas: 3 },
      { fromMs: arrivals[180]!.arriveMs, replicas: 2 },
    ];
    const served = createPoolModel({ ...observation(arrivals, 2), servedOn: steps })!;
    const taken = createPoolModel(observation(arrivals, 2))!;
    // On two replicas each request would have had its 440 ms of prefill and the wait two give it
    // (its TTFT on three had no wait). Taken as two replicas' work, the TTFTs measured on three
    // hide up to those 440 ms.
    const twoWaits = replayPrefillWaits(arrivals, Array(arrivals.length).fill(2000 * MS_PER_TOKEN), 2);
    const truth = quantileCont(
      arrivals.map((a, i) => a.ttftMs + twoWaits[i]!),
      0.95,
    );
    expect(served.predict(2).ttftP95Ms).toBeGreaterThan(truth * 0.95);
    expect(served.predict(2).ttftP95Ms).toBeLessThan(truth * 1.05);
    expect(taken.predict(2).ttftP95Ms).toBeLessThan(truth - 100);
  });

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

  it('with an e2e SLO, counts a request within it only when its TTFT and e2e both meet theirs, as measured', () => {
    fc.assert(
      fc.property(decodingRequests, fc.integer({ min: 1, max: 6 }), slos, (reqs, replicas, slo) => {
        const arrivals = servedOn(replicas, reqs);
        const model = createPoolModel(observation(arrivals, replicas, slo.ttft, slo.e2e))!;
        const p = model.predict(replicas);
        const measuredWithin =
          arrivals.filter((a) => a.ttftMs <= (slo.ttft ?? Infinity) && a.e2eMs! <= (slo.e2e ?? Infinity))
            .length / arrivals.length;
        expect(p.withinSloShare).toBeCloseTo(measuredWithin, 12);
        expect(p.e2eP95Ms).toBeCloseTo(
          quantileCont(
            arrivals.map((a) => a.e2eMs!),
            0.95,
          ),
          6,
        );
      }),
    );
  });

  it('with an e2e SLO, never predicts fewer requests within the SLO on more replicas, nor more under more load', () => {
    fc.assert(
      fc.property(
        decodingRequests,
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        slos,
        (reqs, replicas, load, slo) => {
          const model = createPoolModel(observation(servedOn(replicas, reqs), replicas, slo.ttft, slo.e2e))!;
          for (let n = 1; n < 8; n++) {
            const here = model.predict(n, load);
            expect(model.predict(n + 1, load).withinSloShare).toBeGreaterThanOrEqual(here.withinSloShare);
            expect(model.predict(n, load * 1.5).withinSloShare).toBeLessThanOrEqual(here.withinSloShare);
            expect(here.withinSloShare).toBeLessThanOrEqual(model.attainableShare + 1e-12);
          }
        },
      ),
    );
  });

  it('knows what no replica count attains end to end: a decode longer than the e2e SLO', () => {
    // A queue on one replica, and every fourth request decodes for 8 s against a 5 s e2e SLO.
    const reqs = Array.from({ length: 200 }, (_, i) => ({
      gapMs: 100,
      tokens: 1000,
      decodeMs: i % 4 === 0 ? 8000 : 500,
    }));
    const model = createPoolModel(observation(servedOn(1, reqs), 1, 1000, 5000))!;
    expect(model.attainableShare).toBeCloseTo(0.75, 12);
    expect(model.predict(1).withinSloShare).toBeLessThan(0.5);
    expect(model.predict(50).withinSloShare).toBeCloseTo(0.75, 12);
    // Without the e2e SLO the same pool attains every request.
    expect(createPoolModel(observation(servedOn(1, reqs), 1, 1000))!.attainableShare).toBe(1);
  });

  it('judges a request without a measured e2e on its TTFT alone, and needs some SLO', () => {
    const reqs = Array.from({ length: 50 }, () => ({ gapMs: 200, tokens: 100, decodeMs: 9000 }));
    const arrivals = servedOn(2, reqs).map(({ e2eMs: _, ...a }) => a);
    expect(createPoolModel(observation(arrivals, 2, 1000, 5000))!.predict(2).withinSloShare).toBe(1);
    expect(createPoolModel(observation(arrivals, 2, null, null))).toBeNull();
  });

  it('measures the queue its replay does not explain: replicas held longer than a prompt’s prefill', () => {
    // Replicas held 3× a prompt's prefill (full decode batches): 2,000-token prompts every 100 ms
    // need twelve replicas, not four. On eight, the requests queue; the prefill replay sees no queue.
    const reqs = Array.from({ length: 400 }, () => ({ gapMs: 100, tokens: 2000 }));
    expect(createPoolModel(observation(servedOn(8, reqs, 3), 8))!.unexplainedQueueMs).toBeGreaterThan(1000);
    // Prefill alone, as measured: the replay explains every wait.
    expect(createPoolModel(observation(servedOn(3, reqs), 3))!.unexplainedQueueMs).toBe(0);
  });

  it('stays monotone and exact at its operating point whatever holds the replicas', () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        (reqs, replicas, hold) => {
          const arrivals = servedOn(replicas, reqs, hold);
          const model = createPoolModel(observation(arrivals, replicas))!;
          const measuredWithin = arrivals.filter((a) => a.ttftMs <= 1000).length / arrivals.length;
          expect(model.predict(replicas).withinSloShare).toBeCloseTo(measuredWithin, 12);
          for (let n = 1; n < 8; n++)
            expect(model.predict(n + 1).withinSloShare).toBeGreaterThanOrEqual(
              model.predict(n).withinSloShare,
            );
        },
      ),
    );
  });

  it('counts a task as good only when every one of its requests is within the SLO', () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        (reqs, replicas, perTask, load) => {
          // Consecutive requests form tasks of `perTask` (a session's steps).
          const arrivals = servedOn(replicas, reqs).map((a, i) => ({ ...a, task: i - (i % perTask) }));
          const model = createPoolModel(observation(arrivals, replicas))!;
          for (let n = 1; n < 8; n++) {
            const p = model.predict(n, load);
            // A good task's requests are all within: no more good tasks than requests within, and
            // none at all when no request is.
            const taskCount = Math.ceil(arrivals.length / perTask);
            expect(p.taskWithinSloShare * taskCount).toBeLessThanOrEqual(
              p.withinSloShare * arrivals.length + 1e-9,
            );
            if (p.withinSloShare === 0) expect(p.taskWithinSloShare).toBe(0);
            expect(model.predict(n + 1, load).taskWithinSloShare).toBeGreaterThanOrEqual(
              p.taskWithinSloShare,
            );
          }
        },
      ),
    );
  });

  it('wins no task for sessions that each carry a request no replica count brings within the SLO', () => {
    // Sessions of eight steps, queueing on one replica; each session's last step has a 10,000-token
    // prompt (2 s of prefill against a 1 s TTFT SLO). More replicas raise the requests within the
    // SLO, never a session.
    const reqs = Array.from({ length: 400 }, (_, i) => ({ gapMs: 60, tokens: i % 8 === 7 ? 10_000 : 1000 }));
    const arrivals = servedOn(1, reqs).map((a, i) => ({ ...a, task: i - (i % 8) }));
    const model = createPoolModel(observation(arrivals, 1))!;
    expect(model.predict(8).withinSloShare).toBeGreaterThan(model.predict(1).withinSloShare);
    expect(model.predict(8).taskWithinSloShare).toBe(0);
    expect(model.predict(8).goodTasksPerS).toBe(0);
  });

  it("fails a task whose request it predicts past its client's deadline, never more on more replicas", () => {
    fc.assert(
      fc.property(
        decodingRequests,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 200, max: 8000 }),
        (reqs, n, deadlineMs) => {
          // Each request's client gives it the same deadline; the sample keeps those that finished.
          const arrivals = finishedBy(servedOn(n, reqs), deadlineMs);
          if (arrivals.length === 0) return;
          const model = createPoolModel(observation(arrivals, n, null, 60_000))!;
          // Measured where it was measured: every task of the sample finished.
          expect(model.predict(n).taskFinishShare).toBe(1);
          expect(model.attainableTaskFinishShare).toBe(1);
          for (let k = 1; k < 8; k++) {
            expect(model.predict(k + 1).taskFinishShare).toBeGreaterThanOrEqual(
              model.predict(k).taskFinishShare,
            );
            expect(model.predict(k, 2).taskFinishShare).toBeLessThanOrEqual(model.predict(k).taskFinishShare);
          }
        },
      ),
    );
  });

  it('sees requests pushed past their deadline on fewer replicas fail their sessions', () => {
    // Four replicas keep up with ten 2,000-token prompts a second; on one, the queue grows past the
    // 5 s deadline the clients give. Sessions of five requests: one request past it fails its session.
    const reqs = Array.from({ length: 300 }, () => ({ gapMs: 100, tokens: 2000, decodeMs: 1000 }));
    const arrivals = servedOn(4, reqs).map((a, i) => ({ ...a, task: i - (i % 5), deadlineMs: 5000 }));
    const model = createPoolModel(observation(arrivals, 4, null, 60_000))!;
    expect(model.predict(4).taskFinishShare).toBe(1);
    expect(model.predict(1).taskFinishShare).toBeLessThan(0.2);
    // Without deadlines nothing fails for time.
    const free = createPoolModel(
      observation(
        arrivals.map(({ deadlineMs: _, ...a }) => a),
        4,
        null,
        60_000,
      ),
    )!;
    expect(free.predict(1).taskFinishShare).toBe(1);
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
