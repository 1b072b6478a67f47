import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { estimateKvCapacity, replayKvWaits } from './replay-kv-admission.ts';
import { createPoolModel, type PoolObservation } from './predict-pool.ts';

const MS_PER_TOKEN = 0.05;

const longRequests = fc.array(
  fc.record({
    gapMs: fc.integer({ min: 0, max: 3000 }),
    prompt: fc.integer({ min: 500, max: 30_000 }),
    output: fc.integer({ min: 10, max: 2000 }),
    holdMs: fc.integer({ min: 200, max: 60_000 }),
  }),
  { minLength: 5, maxLength: 120 },
);

type Req = { gapMs: number; prompt: number; output: number; holdMs: number };

/**
 * Requests as a KV-bound pool of `replicas` × `tokensPerReplica` really served them: admitted first
 * come first served when the caches have room (the replay's own rule), prefilling fast (so the cache,
 * not prefill, holds them up); TTFT = wait + prefill + 40 ms. With it, the share of the caches in use
 * over the time the requests were served, as the pool's KV usage gauge reads it.
 */
function servedByCache(
  replicas: number,
  tokensPerReplica: number,
  reqs: Req[],
): { arrivals: RequestArrival[]; kvUsage: number } {
  const arrive = arrivalTimes(reqs.map((r) => r.gapMs)).map((arriveMs) => ({ arriveMs }));
  const waits = replayKvWaits(
    arrive,
    reqs.map((r) => r.prompt + r.output),
    reqs.map((r) => r.holdMs),
    tokensPerReplica,
    replicas,
  );
  const arrivals = reqs.map((r, i) => ({
    arriveMs: arrive[i]!.arriveMs,
    uncachedTokens: r.prompt,
    ttftMs: waits[i]! + r.prompt * MS_PER_TOKEN + 40,
    e2eMs: waits[i]! + r.holdMs,
    queueMs: waits[i]!,
    kvTokens: r.prompt + r.output,
    holdMs: r.holdMs,
  }));
  const tokenMs = reqs.reduce((s, r) => s + (r.prompt + r.output) * r.holdMs, 0);
  const endMs = Math.max(...reqs.map((r, i) => arrive[i]!.arriveMs + waits[i]! + r.holdMs));
  return { arrivals, kvUsage: tokenMs / (endMs - arrive[0]!.arriveMs) / (replicas * tokensPerReplica) };
}

/** The pool as the control loop observes it: its requests completed per second while they were served. */
function observation(arrivals: RequestArrival[], kvUsage: number | null): PoolObservation {
  const endMs = Math.max(...arrivals.map((a) => a.arriveMs + (a.queueMs ?? 0) + (a.holdMs ?? 0)));
  const spanS = (endMs - arrivals[0]!.arriveMs) / 1000;
  return {
    arrivals,
    replicas: 3,
    ratePerS: arrivals.length / spanS,
    msPerToken: MS_PER_TOKEN,
    sloMs: 2000,
    successShare: 1,
    usdPerReplicaHour: 4,
    kvUsage,
  };
}

/**
 * Long conversations, about 85 % of what three replicas of 60k tokens each hold: the cache, not
 * prefill, queues their bursts.
 */
const conversations: Req[] = Array.from({ length: 300 }, (_, i) => ({
  gapMs: 1000 + ((i * 37) % 1600),
  prompt: 8000 + ((i * 7919) % 20_000),
  output: 200 + ((i * 104_729) % 800),
  holdMs: 9000 + ((i * 15_485_863) % 12_000),
}));

describe('the KV admission replay', () => {
  it('never makes a request wait longer on more replicas', () => {
    fc.assert(
      fc.property(
        longRequests,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        (reqs, n, k) => {
          const arrivals = arrivalTimes(reqs.map((r) => r.gapMs)).map((arriveMs) => ({ arriveMs }));
          const kv = reqs.map((r) => r.prompt + r.output);
          const hold = reqs.map((r) => r.holdMs);
          const fewer = replayKvWaits(arrivals, kv, hold, 40_000, n);
          const more = replayKvWaits(arrivals, kv, hold, 40_000, n + k);
          return fewer.every((w, i) => more[i]! <= w + 1e-9);
        },
      ),
    );
  });

  it("reads a replica's cache off the usage the pool reports and the tokens its requests held", () => {
    const { arrivals, kvUsage } = servedByCache(3, 60_000, conversations);
    const rate = observation(arrivals, kvUsage).ratePerS;
    expect(estimateKvCapacity(arrivals, rate, 3, kvUsage)).toBeCloseTo(60_000, -3);
    // No reading, or requests that do not say what they held: nothing to replay.
    expect(estimateKvCapacity(arrivals, rate, 3, null)).toBeNull();
    expect(
      estimateKvCapacity(
        arrivals.map(({ kvTokens: _k, ...r }) => r),
        rate,
        3,
        kvUsage,
      ),
    ).toBeNull();
  });

  it('predicts the queueing a KV-bound pool would have on other replica counts', () => {
    const { arrivals, kvUsage } = servedByCache(3, 60_000, conversations);
    const model = createPoolModel(observation(arrivals, kvUsage))!;
    const within = (a: RequestArrival) => a.ttftMs <= 2000;
    for (const n of [2, 4]) {
      const truth = servedByCache(n, 60_000, conversations).arrivals;
      const truthShare = truth.filter(within).length / truth.length;
      expect(Math.abs(model.predict(n).withinSloShare - truthShare)).toBeLessThan(0.05);
    }
    // The prefill replay alone sees no queue on two replicas: the cache is what fills.
    const prefillOnly = createPoolModel(observation(arrivals, null))!;
    expect(model.predict(2).withinSloShare).toBeLessThan(prefillOnly.predict(2).withinSloShare - 0.1);
    expect(model.unexplainedQueueMs).toBeLessThan(0.05 * 2000);
  });

  it('leaves a pool whose caches are far from full to the prefill replay', () => {
    const reqs: Req[] = Array.from({ length: 100 }, (_, i) => ({
      gapMs: 2000,
      prompt: 1000 + i,
      output: 100,
      holdMs: 500,
    }));
    const { arrivals, kvUsage } = servedByCache(3, 1_000_000, reqs);
    const model = createPoolModel(observation(arrivals, kvUsage))!;
    const plain = createPoolModel(observation(arrivals, null))!;
    for (const n of [1, 2, 3]) expect(model.predict(n)).toEqual(plain.predict(n));
  });
});

/** Arrival times from the gaps between requests. */
function arrivalTimes(gapsMs: readonly number[]): number[] {
  const out: number[] = [];
  let at = 0;
  for (const gap of gapsMs) {
    at += gap;
    out.push(at);
  }
  return out;
}
