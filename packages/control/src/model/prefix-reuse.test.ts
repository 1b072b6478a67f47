import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { measurePrefixReuse, recomputedTokens } from './prefix-reuse.ts';
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
