import { createRequestArrivalsReader } from '@governor/control';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './fixtures/control-test-governor.ts';
import { T0_MS, sendTraffic } from './fixtures/fleet-telemetry.ts';

// The reader of the requests a scale-in replays, against spans sent over OTLP/HTTP to a real
// Governor: when each request reached its pool's queue, its TTFT and the parts of it, per pool.

let g: TestGovernor | null = null;
afterEach(async () => {
  await g?.close();
  g = null;
});

describe('request arrivals', () => {
  it("gives each pool's newest requests in arrival order at its queue, with their uncached prompt and the KV they held", async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'a', gpu_type: 'H100', model: 'm' },
        { name: 'b', gpu_type: 'H100', model: 'm' },
      ],
    });
    // One request every 500 ms on `a` for two minutes (half of them hit the prefix cache), one a
    // second on `b`, a quarter of them retries (governor.attempt 2).
    await sendTraffic(
      g.url,
      [
        { pool: 'a', model: 'm', replicas: 2, ratePerS: 2, queueMs: 40, cacheHitShare: 0.5 },
        { pool: 'b', model: 'm', replicas: 2, ratePerS: 1, retryShare: 0.25 },
      ],
      T0_MS,
      T0_MS + 120_000,
    );
    const atMs = T0_MS + 180_000;
    await g.evaluate(atMs);
    const atNs = BigInt(atMs) * 1_000_000n;

    const all = await createRequestArrivalsReader(g.gov.engine.embedded!)(atNs, 300_000);
    expect(all.get('a')).toHaveLength(240);
    expect(all.get('b')).toHaveLength(120);
    const a = all.get('a')!;
    // Each request's attempt: the load dispersion reads the first attempts as demand.
    expect(a.every((r) => r.attempt === 1)).toBe(true);
    expect(all.get('b')!.filter((r) => r.attempt === 2)).toHaveLength(30);
    expect(all.get('b')!.filter((r) => r.attempt === 1)).toHaveLength(90);
    // Arrival at the queue: the gateway's 2 ms after each request started, so 500 ms apart although
    // each request's queueing (40 ms ± 20 %) and prefill differ — TTFT less both.
    // On the window's time axis (ms since atNs − 300 s): the traffic began 120 s into it.
    expect(a[0]!.arriveMs).toBeGreaterThanOrEqual(120_000);
    expect(a[0]!.arriveMs).toBeLessThan(121_000);
    for (let i = 1; i < a.length; i++) expect(a[i]!.arriveMs - a[i - 1]!.arriveMs).toBeCloseTo(500, 3);
    const ttfts = a.map((r) => r.ttftMs);
    expect(Math.max(...ttfts) - Math.min(...ttfts)).toBeGreaterThan(10);
    // A prefix-cache hit prefills only the fifth of its ~1000-token prompt that missed.
    const uncached = a.map((r) => r.uncachedTokens);
    expect(uncached.filter((t) => t < 300)).toHaveLength(120);
    expect(Math.min(...uncached.filter((t) => t >= 300))).toBeGreaterThanOrEqual(800);
    // The KV cache each request held by its end — its whole prompt (cached or not) and its 100 output
    // tokens — and for how long: from its admission (prefill began) to its end, prefill and decode
    // (15 ms a token).
    // The hits say what they found cached (gen_ai.usage.cache_read.input_tokens): with what they
    // prefilled, their whole prompt.
    for (const r of a) {
      if (r.uncachedTokens >= 300) expect(r.kvTokens).toBe(r.uncachedTokens + 100);
      else expect(r.kvTokens).toBeGreaterThan(5 * r.uncachedTokens);
      expect(r.uncachedTokens + r.cachedTokens! + 100).toBe(r.kvTokens);
      expect(r.holdMs).toBeGreaterThanOrEqual(1500);
      expect(r.holdMs).toBeLessThan(1500 + 0.25 * 1200 * 1.2 + 5);
    }

    // Capped: the newest requests of each pool, still in arrival order.
    const capped = (await createRequestArrivalsReader(g.gov.engine.embedded!, 10)(atNs, 300_000)).get('a')!;
    expect(capped).toHaveLength(10);
    expect(capped.map((r) => r.ttftMs)).toEqual(a.slice(-10).map((r) => r.ttftMs));
    expect(capped.map((r) => r.arriveMs)).toEqual(a.slice(-10).map((r) => r.arriveMs));

    // Only requests that ended in the window count.
    const early = await createRequestArrivalsReader(g.gov.engine.embedded!)(
      BigInt(T0_MS + 60_000) * 1_000_000n,
      300_000,
    );
    expect(early.get('a')!.length).toBeLessThan(121);
  });
});
