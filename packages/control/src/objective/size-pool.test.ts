import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { FIXTURE_MS_PER_TOKEN as MS_PER_TOKEN, finishedBy, servedOn } from '../model/served-on-fixture.ts';
import { createPoolModel } from '../model/predict-pool.ts';
import { sizePool } from './size-pool.ts';

function observationOf(
  replicas: number,
  reqs: { gapMs: number; tokens: number; decodeMs?: number }[],
  e2eSloMs: number | null = null,
) {
  return {
    arrivals: servedOn(replicas, reqs),
    replicas,
    ratePerS: 10,
    msPerToken: MS_PER_TOKEN,
    sloMs: 1000,
    e2eSloMs,
    successShare: 1,
    usdPerReplicaHour: 4,
  };
}

function modelOf(
  replicas: number,
  reqs: { gapMs: number; tokens: number; decodeMs?: number }[],
  e2eSloMs: number | null = null,
) {
  return createPoolModel(observationOf(replicas, reqs, e2eSloMs))!;
}

const requests = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 300 }), tokens: fc.integer({ min: 1, max: 6000 }) }),
  { minLength: 20, maxLength: 200 },
);
const goal = { attainmentTarget: 0.95, loadFactor: 1, floor: 1, ceiling: 16 };

describe('sizePool', () => {
  it('sizes for more load with at least as many replicas', () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        (reqs, n, f) => {
          const model = modelOf(n, reqs);
          const low = sizePool(model, n, { ...goal, loadFactor: f });
          const high = sizePool(model, n, { ...goal, loadFactor: f * 1.5 });
          expect(high.surely).toBeGreaterThanOrEqual(low.surely);
          expect(high.plausibly).toBeGreaterThanOrEqual(low.plausibly);
        },
      ),
    );
  });

  it('never scales in below a count whose prediction surely holds the requirement', () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 8 }), (reqs, n) => {
        const model = modelOf(n, reqs);
        const s = sizePool(model, n, goal);
        if (s.desired < n) {
          const p = model.predict(s.desired);
          if (s.required < goal.attainmentTarget) {
            // What the tasks attain unqueued binds: the smaller count must lose none of those tasks.
            expect(s.required).toBe(model.attainableTaskShare);
            expect(p.taskWithinSloShare).toBeGreaterThanOrEqual(s.required - 1e-9);
          } else {
            expect(p.taskWithinSloShare - p.taskUncertainty).toBeGreaterThanOrEqual(s.required - 1e-9);
          }
        }
        expect(s.plausibly).toBeLessThanOrEqual(s.surely);
        expect(s.desired).toBeGreaterThanOrEqual(goal.floor);
        expect(s.desired).toBeLessThanOrEqual(goal.ceiling);
      }),
    );
  });

  it("never scales in to a count that pushes a request past its client's deadline", () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 500, max: 5000 }),
        (reqs, n, d) => {
          const arrivals = finishedBy(servedOn(n, reqs), d);
          if (arrivals.length === 0) return;
          const model = createPoolModel({ ...observationOf(n, reqs), arrivals })!;
          const s = sizePool(model, n, goal);
          expect(model.predict(s.desired).taskFinishShare).toBeGreaterThanOrEqual(
            Math.min(model.predict(n).taskFinishShare, model.attainableTaskFinishShare) - 1e-9,
          );
        },
      ),
    );
  });

  it('holds a pool none of whose tasks can be within the SLO to finishing them', () => {
    // 6,000-token prompts (1.2 s of prefill against a 1 s SLO): no task is within the SLO on any
    // count, so the SLO asks for nothing. Two replicas keep the queue short; on one it passes the
    // 4 s deadline the clients give, and the tasks fail.
    const reqs = Array.from({ length: 200 }, () => ({ gapMs: 700, tokens: 6000, decodeMs: 2000 }));
    const arrivals = servedOn(2, reqs).map((a) => ({ ...a, deadlineMs: 4000 }));
    const model = createPoolModel({ ...observationOf(2, reqs), arrivals })!;
    expect(model.attainableTaskShare).toBe(0);
    expect(model.predict(1).taskFinishShare).toBeLessThan(1);
    expect(sizePool(model, 2, goal).desired).toBe(2);
    // The same requests without deadlines: nothing holds the second replica.
    const free = createPoolModel(observationOf(2, reqs))!;
    expect(sizePool(free, 2, goal).desired).toBe(1);
  });

  it('keeps the count it has while the prediction cannot tell it from its neighbours (hysteresis)', () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 8 }), (reqs, n) => {
        const s = sizePool(modelOf(n, reqs), n, goal);
        if (n >= s.plausibly && n <= s.surely) expect(s.desired).toBe(n);
      }),
    );
  });

  it('scales a queueing pool up to the count that drains it, and an idle one in', () => {
    // 2,000-token prompts (400 ms each) every 100 ms: four replicas' worth of prefill.
    const steady = Array.from({ length: 400 }, () => ({ gapMs: 100, tokens: 2000 }));
    const short = sizePool(modelOf(2, steady), 2, goal);
    expect(short.desired).toBeGreaterThanOrEqual(4);
    expect(short.after.withinSloShare).toBeGreaterThanOrEqual(0.95);
    const idle = sizePool(modelOf(10, steady), 10, goal);
    expect(idle.desired).toBeLessThan(10);
    expect(idle.desired).toBeGreaterThanOrEqual(4);
  });

  it('asks no more replicas for prompts that miss the SLO on an idle replica', () => {
    const slow = Array.from({ length: 200 }, (_, i) => ({ gapMs: 1000, tokens: i % 2 ? 10_000 : 200 }));
    const s = sizePool(modelOf(2, slow), 2, goal);
    expect(s.required).toBeCloseTo(0.5, 6);
    expect(s.desired).toBeLessThanOrEqual(2);
    expect(s.infeasible).toBe(false);
  });

  it('buys no replicas for requests whose e2e no replica count brings within the SLO', () => {
    // A queue on two replicas (four replicas' worth of prefill), but every request decodes past the
    // 20 s e2e SLO: no count wins a request within it, so none is asked for.
    const slow = Array.from({ length: 400 }, () => ({ gapMs: 100, tokens: 2000, decodeMs: 30_000 }));
    const s = sizePool(modelOf(2, slow, 20_000), 2, goal);
    expect(s.required).toBe(0);
    expect(s.desired).toBeLessThanOrEqual(2);
    // With half of them decoding in time, the same queue is worth draining for that half.
    const half = slow.map((r, i) => (i % 2 ? r : { ...r, decodeMs: 1000 }));
    const h = sizePool(modelOf(2, half, 20_000), 2, goal);
    expect(h.required).toBeCloseTo(0.5, 6);
    expect(h.surely).toBeGreaterThan(2);
  });

  it('judges tasks, not requests: a pool none of whose tasks can be within the SLO is held to its floor', () => {
    // Sessions of five requests queueing on three replicas (a replica's worth of prefill each 400 ms);
    // the last request of every session decodes past the 20 s e2e SLO on an idle replica.
    const reqs = Array.from({ length: 300 }, (_, i) => ({
      gapMs: 150,
      tokens: 2000,
      decodeMs: i % 5 === 4 ? 30_000 : 500,
    }));
    const asTasks = (arrivals: RequestArrival[]) => arrivals.map((a, i) => ({ ...a, task: i - (i % 5) }));
    const model = (tasks: boolean) =>
      createPoolModel({
        arrivals: tasks ? asTasks(servedOn(3, reqs)) : servedOn(3, reqs),
        replicas: 3,
        ratePerS: 10,
        msPerToken: MS_PER_TOKEN,
        sloMs: 1000,
        e2eSloMs: 20_000,
        successShare: 1,
        usdPerReplicaHour: 4,
      })!;
    // As single requests, four in five can be within the SLO: the queue is worth draining.
    const requests = sizePool(model(false), 3, goal);
    expect(requests.required).toBeCloseTo(0.8, 6);
    expect(requests.surely).toBeGreaterThanOrEqual(3);
    // As sessions, none can: no replica count wins a task within the SLO, so the cost decides.
    const sessions = sizePool(model(true), 3, goal);
    expect(sessions.required).toBe(0);
    expect(sessions.surely).toBe(goal.floor);
    expect(sessions.after.taskWithinSloShare).toBe(0);
  });
});
