import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIXTURE_MS_PER_TOKEN, servedOn } from '../model/served-on-fixture.ts';
import { createPoolModel } from '../model/predict-pool.ts';
import { type ShiftPool, predictShiftGoodput } from './predict-shift.ts';

const requests = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 400 }), tokens: fc.integer({ min: 1, max: 4000 }) }),
  { minLength: 20, maxLength: 120 },
);

function pool(
  name: string,
  reqs: { gapMs: number; tokens: number }[],
  replicas: number,
  goodput: number,
  modelled = true,
): ShiftPool {
  const span = reqs.reduce((s, r) => s + r.gapMs, 0) / 1000;
  const ratePerS = reqs.length / Math.max(1, span);
  const model = modelled
    ? createPoolModel({
        arrivals: servedOn(replicas, reqs),
        replicas,
        ratePerS,
        msPerToken: FIXTURE_MS_PER_TOKEN,
        sloMs: 1000,
        successShare: 1,
        usdPerReplicaHour: 4,
      })
    : null;
  return { pool: name, ratePerS, goodput, replicas, model };
}

/** The pools' shares of the traffic they serve now. */
function sharesNow(pools: readonly ShiftPool[]): Record<string, number> {
  const total = pools.reduce((s, p) => s + p.ratePerS, 0);
  return Object.fromEntries(pools.map((p) => [p.pool, p.ratePerS / total]));
}

describe('predictShiftGoodput', () => {
  it('predicts what was measured when no traffic moves', () => {
    fc.assert(
      fc.property(requests, requests, fc.double({ min: 0, max: 1, noNaN: true }), (a, b, g) => {
        const pools = [pool('a', a, 2, g), pool('b', b, 3, 1 - g)];
        const p = predictShiftGoodput(pools, sharesNow(pools))!;
        expect(p.to).toBeCloseTo(p.from, 9);
      }),
      { numRuns: 100 },
    );
  });

  it('predicts for pools without a model whose shares move only by rounding', () => {
    const light = Array.from({ length: 60 }, () => ({ gapMs: 400, tokens: 200 }));
    const pools = [pool('a', light, 2, 0.7, false), pool('b', light.slice(0, 37), 3, 0.9, false)];
    const now = sharesNow(pools);
    // A weight a few ulps above today's share, as renormalizing weights in floating point leaves it.
    const p = predictShiftGoodput(pools, { a: now.a! * (1 + 1e-12), b: now.b! });
    expect(p).not.toBeNull();
    expect(p!.to).toBeCloseTo(p!.from, 9);
  });

  it('predicts a gain for moving traffic off a failing pool onto a peer with room', () => {
    // A failing pool (a fifth of its tasks within the SLO) and an idle healthy peer: short prompts,
    // one every 400 ms, on four replicas.
    const light = Array.from({ length: 60 }, () => ({ gapMs: 400, tokens: 200 }));
    const faulty = pool('faulty', light, 2, 0.2);
    const peer = pool('peer', light, 4, 1);
    const p = predictShiftGoodput([faulty, peer], { faulty: 0.1, peer: 0.9 })!;
    expect(p.to).toBeGreaterThan(p.from);
  });

  it('predicts a fall when the peer cannot carry what it is given', () => {
    // One replica, prompts that prefill for 600 ms every 800 ms: all of its twin's traffic doubles
    // its load past what it serves.
    const busy = Array.from({ length: 80 }, () => ({ gapMs: 800, tokens: 3000 }));
    const a = pool('a', busy, 1, 0.95);
    const b = pool('b', busy, 1, 0.95);
    const p = predictShiftGoodput([a, b], { a: 0, b: 1 })!;
    expect(p.to).toBeLessThan(p.from);
  });

  it('gives no prediction when a pool that gains traffic has no model', () => {
    const reqs = Array.from({ length: 40 }, () => ({ gapMs: 300, tokens: 500 }));
    const a = pool('a', reqs, 2, 0.6);
    const b = pool('b', reqs, 2, 0.9, false);
    expect(predictShiftGoodput([a, b], { a: 0.2, b: 0.8 })).toBeNull();
    // Losing traffic without a model keeps its goodput: a prediction still.
    expect(predictShiftGoodput([a, b], { a: 0.8, b: 0.2 })).not.toBeNull();
  });
});
