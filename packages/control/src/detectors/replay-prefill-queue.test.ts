import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestArrival } from '@governor/signals';
import { replayAtReplicas, replayPrefillWaits } from './replay-prefill-queue.ts';

const MS_PER_TOKEN = 0.5;

/** Requests as they were measured on an uncrowded pool: TTFT is their own prefill plus 50 ms. */
function measured(arrivals: { atMs: number; tokens: number }[]): RequestArrival[] {
  return arrivals.map(({ atMs, tokens }) => ({
    arriveMs: atMs,
    ttftMs: 50 + tokens * MS_PER_TOKEN,
    uncachedTokens: tokens,
  }));
}

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
});

describe('replayAtReplicas', () => {
  // One request a second for five minutes, 0.6 replicas of prefill work on average either way.
  const steady = measured(Array.from({ length: 300 }, (_, i) => ({ atMs: i * 1000, tokens: 1200 })));
  const heavyTailed = measured(
    Array.from({ length: 300 }, (_, i) => ({ atMs: i * 1000, tokens: i % 60 === 30 ? 60_600 : 200 })),
  );

  it('sees no loss on one replica fewer when the prompts are alike', () => {
    const out = replayAtReplicas(steady, {
      nowReplicas: 2,
      afterReplicas: 1,
      msPerToken: MS_PER_TOKEN,
      sloMs: 2000,
    });
    expect(out?.now.withinSloShare).toBe(1);
    expect(out?.after.withinSloShare).toBe(1);
    expect(out?.after.ttftP95Ms).toBe(650);
  });

  it('sees the SLO break on a lone replica when a few long prompts carry the same mean load', () => {
    const out = replayAtReplicas(heavyTailed, {
      nowReplicas: 2,
      afterReplicas: 1,
      msPerToken: MS_PER_TOKEN,
      sloMs: 2000,
    });
    // Five 30 s prefills: on two replicas the short prompts pass them; on one, ~28 each wait behind.
    expect(out?.now.withinSloShare).toBeCloseTo(295 / 300, 5);
    expect(out?.after.withinSloShare).toBeLessThan(0.6);
    expect(out?.after.ttftP95Ms).toBeGreaterThan(20_000);
  });

  it('changes nothing at the same replica count, and needs requests', () => {
    const same = replayAtReplicas(heavyTailed, {
      nowReplicas: 2,
      afterReplicas: 2,
      msPerToken: MS_PER_TOKEN,
      sloMs: 2000,
    });
    expect(same?.after).toEqual({ ...same?.now, replicas: 2 });
    expect(replayAtReplicas([], { nowReplicas: 2, afterReplicas: 1, msPerToken: 1, sloMs: 2000 })).toBeNull();
  });
});
