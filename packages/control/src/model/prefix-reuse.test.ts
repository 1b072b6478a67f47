import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { estimateCachedTokens, measurePrefixReuse, recomputedTokens } from './prefix-reuse.ts';
import { createPoolModel, type PoolObservation } from './predict-pool.ts';

const MS_PER_TOKEN = 0.75;

/**
 * `sessions` agent sessions taking turns: each turn sends its whole context (found cached but for
 * the turn's new tokens) and grows it. A turn every `gapMs` across the pool, each served unqueued.
 */
function sessionsTakingTurns(sessions: number, turns: number, contextTokens: number, gapMs: number) {
  const arrivals: RequestArrival[] = [];
  for (let k = 0; k < sessions * turns; k++) {
    const session = k % sessions;
    const first = k < sessions;
    const newTokens = 2000;
    const cached = first ? 0 : contextTokens;
    const uncached = first ? contextTokens : newTokens;
    const ttftMs = uncached * MS_PER_TOKEN + 50;
    arrivals.push({
      arriveMs: k * gapMs,
      ttftMs,
      e2eMs: ttftMs + 4000,
      task: session,
      uncachedTokens: uncached,
      cachedTokens: cached,
      kvTokens: contextTokens + newTokens,
      holdMs: 4000 + uncached * MS_PER_TOKEN,
      deadlineMs: 300_000,
    });
  }
  return arrivals;
}

/**
 * The same requests as vLLM's `llm_request` span gives them: a prompt size but not what it found
 * cached; and the hit rate its prefix cache counters give over them (hit tokens over prompt tokens).
 */
function asVllmSends(arrivals: readonly RequestArrival[]): { arrivals: RequestArrival[]; hitRate: number } {
  let hits = 0;
  let prompt = 0;
  const stripped = arrivals.map(({ cachedTokens, ...a }) => {
    hits += cachedTokens ?? 0;
    prompt += a.uncachedTokens + (cachedTokens ?? 0);
    return { ...a, uncachedTokens: a.uncachedTokens + (cachedTokens ?? 0) };
  });
  return { arrivals: stripped, hitRate: hits / prompt };
}

function observation(arrivals: RequestArrival[], replicas: number, kvUsage: number | null): PoolObservation {
  return {
    arrivals,
    replicas,
    ratePerS: 1000 / 20_000,
    msPerToken: MS_PER_TOKEN,
    sloMs: 2000,
    e2eSloMs: null,
    successShare: 1,
    usdPerReplicaHour: 16,
    kvUsage,
  };
}

describe('measurePrefixReuse', () => {
  it("counts a task's own context and the other contexts touched since its last request", () => {
    const reuse = measurePrefixReuse(sessionsTakingTurns(2, 3, 100_000, 20_000))!;
    // The first turns reused nothing; a later turn reused its 100K context, behind one other 102K one.
    expect([...reuse.reused]).toEqual([0, 0, 100_000, 100_000, 100_000, 100_000]);
    expect(reuse.distance[2]).toBe(102_000 + 102_000);
    // Both fit in 250K tokens of cache, not in 150K: each reused context is prefilled again.
    expect([...recomputedTokens(reuse, 250_000, 250_000)].every((t) => t === 0)).toBe(true);
    expect([...recomputedTokens(reuse, 250_000, 150_000)]).toEqual([
      0, 0, 100_000, 100_000, 100_000, 100_000,
    ]);
  });

  it('has nothing to say of requests without cached tokens or a task seen before', () => {
    const single = sessionsTakingTurns(4, 1, 50_000, 1000);
    expect(measurePrefixReuse(single)).toBeNull();
    const unreported = sessionsTakingTurns(2, 3, 50_000, 1000).map(({ cachedTokens: _, ...a }) => a);
    expect(measurePrefixReuse(unreported)).toBeNull();
  });

  it("reads each reused context's stack distance as a scan back over the sample does", () => {
    // Tasks drawn at random, each request's context its own size: the distinct other tasks between a
    // task's two requests, each at its latest context, counted directly.
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ task: fc.integer({ min: 0, max: 6 }), kv: fc.integer({ min: 1, max: 50_000 }) }),
          {
            minLength: 2,
            maxLength: 80,
          },
        ),
        (reqs) => {
          const arrivals: RequestArrival[] = reqs.map((r, i) => ({
            arriveMs: i * 100,
            ttftMs: 100,
            task: r.task,
            uncachedTokens: 10,
            cachedTokens: r.kv,
            kvTokens: r.kv,
            holdMs: 100,
          }));
          const reuse = measurePrefixReuse(arrivals);
          for (let i = 0; i < arrivals.length; i++) {
            let prev = i - 1;
            while (prev >= 0 && arrivals[prev]!.task !== arrivals[i]!.task) prev--;
            if (prev < 0) continue;
            const seen = new Set<number>();
            let others = 0;
            for (let j = i - 1; j > prev; j--) {
              if (seen.has(arrivals[j]!.task!)) continue;
              seen.add(arrivals[j]!.task!);
              others += arrivals[j]!.kvTokens!;
            }
            expect(reuse!.distance[i]).toBe(arrivals[prev]!.kvTokens! + others);
          }
        },
      ),
    );
  });

  it('recomputes no less on less cache, and nothing on the cache the sample had or more', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1000, max: 120_000 }),
        fc.integer({ min: 0, max: 800_000 }),
        fc.integer({ min: 0, max: 800_000 }),
        (sessions, turns, context, a, b) => {
          const reuse = measurePrefixReuse(sessionsTakingTurns(sessions, turns, context, 10_000));
          if (!reuse) return;
          const served = Math.max(a, b);
          const less = recomputedTokens(reuse, served, Math.min(a, b));
          const more = recomputedTokens(reuse, served, served);
          expect([...more].every((t) => t === 0)).toBe(true);
          const sum = (xs: Float64Array) => xs.reduce((s, x) => s + x, 0);
          const lesser = recomputedTokens(reuse, served, Math.min(a, b) / 2);
          expect(sum(lesser)).toBeGreaterThanOrEqual(sum(less));
        },
      ),
    );
  });
});

describe('estimateCachedTokens', () => {
  const sum = (xs: readonly RequestArrival[], f: (a: RequestArrival) => number) =>
    xs.reduce((s, a) => s + f(a), 0);

  it('gives the hits the counters count to the contexts that came back soonest', () => {
    // Task 0 comes back right after its first request, task 1 after two other contexts: with hits for
    // one context, an LRU cache still held task 0's.
    const req = (task: number, prompt: number, kv: number): RequestArrival => ({
      arriveMs: 0,
      ttftMs: 100,
      task,
      uncachedTokens: prompt,
      kvTokens: kv,
      holdMs: 100,
    });
    const arrivals = [
      req(1, 10_000, 12_000),
      req(2, 10_000, 12_000),
      req(0, 10_000, 12_000),
      req(0, 13_000, 15_000),
      req(1, 13_000, 15_000),
    ];
    const hitRate = 12_000 / sum(arrivals, (a) => a.uncachedTokens);
    const estimated = estimateCachedTokens(arrivals, hitRate);
    expect(estimated[3]!.cachedTokens).toBe(12_000);
    expect(estimated[3]!.uncachedTokens).toBe(1000);
    expect(estimated[4]!.cachedTokens).toBe(0);
    expect(estimated[4]!.uncachedTokens).toBe(13_000);
    // More hits than the tasks' own contexts: the rest are prefixes every request shares.
    const more = estimateCachedTokens(arrivals, (24_000 + 5_000) / sum(arrivals, (a) => a.uncachedTokens));
    expect(more[4]!.cachedTokens).toBeGreaterThan(12_000);
    expect(more[0]!.cachedTokens).toBeGreaterThan(0);
  });

  it('leaves requests that say what they found cached, or a pool without a hit rate, as they are', () => {
    const arrivals = sessionsTakingTurns(2, 3, 50_000, 1000);
    expect(estimateCachedTokens(arrivals, 0.5)).toBe(arrivals);
    const vllm = asVllmSends(arrivals).arrivals;
    expect(estimateCachedTokens(vllm, null)).toBe(vllm);
    expect(estimateCachedTokens(vllm, 0)).toBe(vllm);
  });

  it('finds as many tokens cached as the hit rate says, none past a prompt, more on a higher rate', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            task: fc.integer({ min: 0, max: 5 }),
            prompt: fc.integer({ min: 1, max: 40_000 }),
            output: fc.integer({ min: 0, max: 2000 }),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (reqs, a, b) => {
          const arrivals: RequestArrival[] = reqs.map((r, i) => ({
            arriveMs: i * 100,
            ttftMs: 100,
            task: r.task,
            uncachedTokens: r.prompt,
            kvTokens: r.prompt + r.output,
            holdMs: 100,
          }));
          const prompt = sum(arrivals, (x) => x.uncachedTokens);
          const low = estimateCachedTokens(arrivals, Math.min(a, b));
          const high = estimateCachedTokens(arrivals, Math.max(a, b));
          const room = sum(arrivals, (x) => x.uncachedTokens - 1);
          expect(sum(high, (x) => x.cachedTokens ?? 0)).toBeCloseTo(
            Math.min(Math.max(a, b) * prompt, room),
            3,
          );
          high.forEach((x, i) => {
            // A zero hit rate leaves them as they were: nothing said cached.
            expect((x.cachedTokens ?? 0) + x.uncachedTokens).toBeCloseTo(arrivals[i]!.uncachedTokens, 6);
            expect(x.uncachedTokens).toBeGreaterThanOrEqual(1);
            expect(x.cachedTokens ?? 0).toBeGreaterThanOrEqual((low[i]!.cachedTokens ?? 0) - 1e-6);
          });
        },
      ),
    );
  });
});

describe('a pool model with a prefix cache', () => {
  // Four agent sessions of ~100K-token contexts on two replicas of ~450K KV tokens each: every
  // context stays cached. On one replica they no longer fit.
  const arrivals = sessionsTakingTurns(4, 6, 100_000, 20_000);
  const withCache = createPoolModel(observation(arrivals, 2, 0.1))!;
  const without = createPoolModel(
    observation(
      arrivals.map(({ cachedTokens: _, ...a }) => a),
      2,
      0.1,
    ),
  )!;

  it('returns what was measured on the replicas that served it', () => {
    expect(withCache.predict(2)).toEqual(without.predict(2));
  });

  it('predicts the contexts fewer replicas cannot hold prefilled again', () => {
    expect(withCache.kvTokensPerReplica).toBeGreaterThan(300_000);
    expect(withCache.kvTokensPerReplica).toBeLessThan(600_000);
    const one = withCache.predict(1);
    // 100K tokens at 0.75 ms each: over a minute of prefill a turn, where a cached turn took 1.5 s;
    // the turns queue behind each other past their clients' deadlines.
    expect(one.ttftP95Ms).toBeGreaterThan(without.predict(1).ttftP95Ms * 3);
    expect(without.predict(1).taskFinishShare).toBe(1);
    expect(one.taskFinishShare).toBeLessThan(0.5);
  });

  it("predicts the same from vLLM's spans and its prefix cache counters", () => {
    // vLLM's span gives the whole prompt and nothing cached; its counters give the pool's hit rate.
    const vllm = asVllmSends(arrivals);
    // The prefill speed read off those spans is per prompt token, cached or not.
    const fromCounters = createPoolModel({
      ...observation(vllm.arrivals, 2, 0.1),
      msPerToken: MS_PER_TOKEN * (1 - vllm.hitRate),
      prefixHitRate: vllm.hitRate,
    })!;
    const measured = withCache.predict(2);
    const predicted = fromCounters.predict(2);
    expect(predicted.ttftP95Ms).toBeCloseTo(measured.ttftP95Ms, 6);
    expect(predicted.taskFinishShare).toBe(measured.taskFinishShare);
    expect(predicted.withinSloShare).toBe(measured.withinSloShare);
    const one = fromCounters.predict(1);
    expect(one.ttftP95Ms).toBeGreaterThan(without.predict(1).ttftP95Ms * 3);
    // The contexts lost cost what they cost where the spans said what was cached.
    expect(one.ttftP95Ms / withCache.predict(1).ttftP95Ms).toBeCloseTo(1, 2);
    expect(one.taskFinishShare).toBeLessThan(0.5);
  });

  it('is monotone in replicas and load', () => {
    for (const f of [1, 1.5, 3]) {
      let last = Number.POSITIVE_INFINITY;
      for (let n = 1; n <= 4; n++) {
        const p = withCache.predict(n, f).ttftP95Ms;
        expect(p).toBeLessThanOrEqual(last);
        last = p;
      }
    }
    for (let n = 1; n <= 3; n++)
      expect(withCache.predict(n, 2).ttftP95Ms).toBeGreaterThanOrEqual(withCache.predict(n, 1).ttftP95Ms);
  });
});
