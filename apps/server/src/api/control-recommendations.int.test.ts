import type { Recommendation, RecommendationKind } from '@governor/conventions';
import { afterEach, describe, expect, test } from 'vitest';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  TEST_POOLS,
  type TestGovernor,
  WARM_UP_MS,
  runTicks,
  startTestGovernor,
} from './fixtures/control-test-governor.ts';
import { type PoolTraffic, T0_MS, sendTraffic } from './fixtures/fleet-telemetry.ts';

// Each recommendation kind from real telemetry showing its condition: spans and gauges go in over
// OTLP/HTTP, the real signals read them, POST /api/control/evaluate runs the tick at event time.

let g: TestGovernor | null = null;
afterEach(async () => {
  await g?.close();
  g = null;
});

const h100 = H100_TRAFFIC;
const a100 = A100_TRAFFIC;

const find = <K extends RecommendationKind>(recs: Recommendation[], kind: K, pool?: string) =>
  recs.filter(
    (r): r is Extract<Recommendation, { kind: K }> =>
      r.kind === kind && (pool === undefined || r.target.pool === pool),
  );

/** The scale-ins for `pool` recommended over some ticks. */
const scaleInsOver = (ticks: readonly { recommendations: Recommendation[] }[], pool: string) =>
  find(
    ticks.flatMap((t) => t.recommendations),
    'scale',
    pool,
  ).filter((r) => r.action.to < r.action.from);

/** A scale-in from `from` replicas to fewer, but not to zero: what the model chose within that is its own. */
function expectScaleInFrom(rec: Recommendation | undefined, from: number, state?: string): number {
  expect(rec, 'a scale-in').toBeDefined();
  const action = rec!.action as { from: number; to: number };
  expect(action.from).toBe(from);
  expect(action.to).toBeLessThan(from);
  expect(action.to).toBeGreaterThanOrEqual(1);
  if (state !== undefined) expect(rec!.state).toBe(state);
  return action.to;
}

/** The scale-ups for `pool` recommended over some ticks. */
const scaleUpsOver = (ticks: readonly { recommendations: Recommendation[] }[], pool: string) =>
  find(
    ticks.flatMap((t) => t.recommendations),
    'scale',
    pool,
  ).filter((r) => r.action.to > r.action.from);

/** Governor on TEST_POOLS held at max_replicas 2, both pools warmed up with `calm`. */
async function warmUpAtMaxReplicas(calm: Partial<PoolTraffic>): Promise<TestGovernor> {
  g = await startTestGovernor({ pools: TEST_POOLS.map((p) => ({ ...p, max_replicas: 2 })) });
  await runTicks(g, both(calm), 0, WARM_UP_MS);
  return g;
}

/** Both test pools' traffic with the same changes. */
const both = (change: Partial<PoolTraffic>): PoolTraffic[] => [
  { ...h100, ...change },
  { ...a100, ...change },
];

async function latest(): Promise<Recommendation[]> {
  const { body } = await g!.request<{ recommendations: Recommendation[] }>(
    'GET',
    '/api/recommendations?limit=1000',
  );
  return body.recommendations;
}

describe('recommendations from telemetry', () => {
  test('a queue-bound pool is scaled up; its healthy peer is left alone', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    const [tick] = await runTicks(g, [{ ...h100, queueMs: 3000 }, a100], WARM_UP_MS, WARM_UP_MS + 30_000);
    const scale = find(tick!.recommendations, 'scale', 'h100-east').filter((r) => r.state === 'proposed');
    expect(scale).toHaveLength(1);
    // TTFT 1.7× past the SLO with the capacity unknown: grow with the pressure, 2 → 4.
    expect(scale[0]).toMatchObject({ action: { from: 2, to: 4 }, state: 'proposed', policy: null });
    expect(scale[0]!.reason).toMatch(/queueing/);
    const queueShare = scale[0]!.evidence.find((e) => e.signal.startsWith('queueShareOfTtft'));
    expect(queueShare!.value).toBeGreaterThan(0.4);
    expect(scale[0]!.expectedImpact).toHaveProperty('costUsdPerHour');
    // Four replicas would win back fewer tasks within the SLO than they cost at the fleet's price of
    // one: it waits for a human, and its confidence (that it pays for itself) is below even odds.
    expect(scale[0]!.waits).toMatch(/fewer tasks within the SLO than it costs/);
    expect(scale[0]!.confidence).toBeLessThan(0.5);
    expect(
      find(tick!.recommendations, 'scale', 'a100-west').filter((r) => r.action.to > r.action.from),
    ).toEqual([]);
  });

  test('one pool with 30% errors against its peer is circuit-broken and its traffic shifted; the peer is sized for it', async () => {
    // H100's 3,000-token prompts keep each replica prefilling 60% of the time: twice its load would
    // be more than its two replicas can prefill at all.
    const heavy = { ...h100, inputTokens: 3000 };
    g = await startTestGovernor();
    await runTicks(g, [heavy, a100], 0, WARM_UP_MS);
    const [tick] = await runTicks(g, [heavy, { ...a100, errorRate: 0.3 }], WARM_UP_MS, WARM_UP_MS + 30_000);
    const recs = tick!.recommendations;
    expect(find(recs, 'circuit_break', 'a100-west')[0]).toMatchObject({
      action: { open: true, durationS: 300 },
    });
    const shift = find(recs, 'shift_traffic', 'a100-west')[0]!;
    expect(shift.target).toEqual({ model: 'llama-8b', pool: 'a100-west' });
    expect(shift.action).toEqual({ weights: { 'a100-west': 0, 'h100-east': 1 } });
    expect(shift.reason).toMatch(
      /2\d(\.\d)?% of its requests fail \(timeouts and rejections aside\) vs 0% on its peers/,
    );
    // Sized by its model: its own requests, replayed at twice the load, on enough replicas.
    const grow = find(recs, 'scale', 'h100-east').filter((r) => r.action.to > r.action.from);
    expect(grow).toHaveLength(1);
    expect(grow[0]!.state).toBe('proposed');
    expect((grow[0]!.action as { to: number }).to).toBeGreaterThanOrEqual(3);
    expect(grow[0]!.reason).toMatch(/takes over 50% of llama-8b's traffic/);
    expect(grow[0]!.reason).toMatch(/requests replayed at that load/);
    expect(find(recs, 'scale', 'a100-west').filter((r) => r.action.to > r.action.from)).toEqual([]);
  });

  test('a peer whose own requests, replayed at the load a shift moves onto it, keep the SLO on its replicas is not grown', async () => {
    // H100's 1,000-token prompts keep each replica prefilling 20% of the time: at twice the load its
    // two replicas still prefill without a queue to speak of.
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    const [tick] = await runTicks(g, [h100, { ...a100, errorRate: 0.3 }], WARM_UP_MS, WARM_UP_MS + 30_000);
    const recs = tick!.recommendations;
    expect(find(recs, 'shift_traffic', 'a100-west')[0]!.action).toEqual({
      weights: { 'a100-west': 0, 'h100-east': 1 },
    });
    expect(find(recs, 'scale', 'h100-east').filter((r) => r.action.to > r.action.from)).toEqual([]);
  });

  test("a pool's extra faults are an incident past the error budget the attainment target leaves, not within it", async () => {
    // 15% of A100's requests fail, none of H100's. At slo_attainment_target 0.95 (5% may fail) that
    // breaks the objective; at 0.8 (20% may) it does not, and traffic stays where it is.
    const outliersAt = async (target: number) => {
      g = await startTestGovernor({ control: { slo_attainment_target: target } });
      await runTicks(g, [h100, a100], 0, WARM_UP_MS);
      const ticks = await runTicks(g, [h100, { ...a100, errorRate: 0.15 }], WARM_UP_MS, WARM_UP_MS + 60_000);
      await g.close();
      g = null;
      const recs = ticks.flatMap((t) => t.recommendations);
      // Taken away for an incident: a shift off the pool, or its circuit opened.
      return [...find(recs, 'shift_traffic', 'a100-west'), ...find(recs, 'circuit_break', 'a100-west')];
    };
    const strict = await outliersAt(0.95);
    expect(strict.length).toBeGreaterThan(0);
    expect(strict[0]!.reason).toMatch(/1\d(\.\d)?% of its requests fail \(timeouts and rejections aside\)/);
    expect(
      strict[0]!.evidence.find((e) => e.signal === 'faultTestConfidence{pool=a100-west}')?.value,
    ).toBeGreaterThanOrEqual(0.99);
    expect(await outliersAt(0.8)).toEqual([]);
  });

  test('a failing pool whose peers are load-bound themselves is reported, and its shift left to a human', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // A burst queues on both pools while A100 fails 30% of its requests.
    const burst = { queueMs: 3000 };
    const [tick] = await runTicks(
      g,
      [
        { ...h100, ...burst },
        { ...a100, ...burst, errorRate: 0.3 },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const shift = find(tick!.recommendations, 'shift_traffic', 'a100-west')[0]!;
    expect(shift.reason).toMatch(
      /2\d(\.\d)?% of its requests fail \(timeouts and rejections aside\) vs 0% on its peers/,
    );
    expect(shift.reason).toMatch(/load-bound themselves/);
    // Proposed, not auto-applied (moving traffic onto load-bound peers turns errors into timeouts),
    // and the breaker stays closed: A100 still serves most of its requests.
    expect(shift.waits).toMatch(/no room/);
    expect(shift.state).toBe('proposed');
    expect(find(tick!.recommendations, 'circuit_break')).toEqual([]);
  });

  test("a slow GPU shows in its engines' counters before its requests end, and its last slow requests do not outlast it", async () => {
    g = await startTestGovernor();
    const healthy = [
      { ...h100, engineSlowdown: 1 },
      { ...a100, engineSlowdown: 1 },
    ];
    await runTicks(g, healthy, 0, WARM_UP_MS);
    // H100's steps take 2.5× as long; no request has ended on the slow GPU yet, so its spans look usual.
    const [slow] = await runTicks(
      g,
      [{ ...h100, engineSlowdown: 2.5 }, healthy[1]!],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const shift = find(slow!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    expect(shift.reason).toMatch(/its engines take 2\.\d× their usual time for the work they do/);
    const engine = shift.evidence.find((e) => e.signal === 'engineBusyVsWork{pool=h100-east}')!;
    expect(engine.value).toBeGreaterThan(2);
    // The GPU is well again; requests that ran on it while it was slow still end, slowly.
    const [after] = await runTicks(
      g,
      [{ ...h100, engineSlowdown: 1, prefillMsPerToken: 0.625, decodeMsPerToken: 37.5 }, healthy[1]!],
      WARM_UP_MS + 30_000,
      WARM_UP_MS + 60_000,
    );
    const stale = find(after!.recommendations, 'shift_traffic', 'h100-east').filter((r) =>
      /usual engine time|engines take/.test(r.reason),
    );
    expect(stale).toEqual([]);
    expect(find(after!.recommendations, 'circuit_break')).toEqual([]);
  });

  test('a slow pool keeps its traffic while its calm peer could not carry the share that would move', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // A100 queues at 1 request/s per replica: with its prompts, that is what it sustains.
    await runTicks(g, [h100, { ...a100, queueMs: 3000 }], WARM_UP_MS, WARM_UP_MS + 60_000);
    // Calm again, while H100's engines run 2.5× slower at the same load: an outlier against A100.
    const [, tick] = await runTicks(
      g,
      [{ ...h100, prefillMsPerToken: 0.625, decodeMsPerToken: 37.5 }, a100],
      WARM_UP_MS + 60_000,
      WARM_UP_MS + 120_000,
    );
    const shift = find(tick!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    expect(shift.reason).toMatch(/requests take 2\.\d× their usual engine time/);
    // A100 already carries 2 requests/s, over the 1.4 its capacity allows at the target utilization:
    // the requests that would move would queue there. Proposed for a human, not auto-applied.
    expect(shift.reason).toMatch(/cannot carry it now/);
    expect(shift.waits).toMatch(/a human decides/);
    expect(find(tick!.recommendations, 'circuit_break')).toEqual([]);
  });

  /**
   * A100's engines run 4× slower (past circuitBreakLatencyRatio) while it still serves every request,
   * next to H100 with prompts of `h100InputTokens`: the tick that sees it.
   */
  async function slowA100Beside(h100InputTokens: number): Promise<Recommendation[]> {
    const peer = { ...h100, inputTokens: h100InputTokens };
    g = await startTestGovernor();
    await runTicks(g, [peer, a100], 0, WARM_UP_MS);
    const slow = { ...a100, prefillMsPerToken: 1.6, decodeMsPerToken: 60, engineSlowdown: 4 };
    const [tick] = await runTicks(g, [peer, slow], WARM_UP_MS, WARM_UP_MS + 30_000);
    return tick!.recommendations;
  }

  test("a pool too slow to keep is taken out of rotation when its peer's model says it carries all of its traffic", async () => {
    // H100's 1,000-token prompts: its own requests replayed at twice the load keep the SLO on its two replicas.
    const recs = await slowA100Beside(1000);
    expect(find(recs, 'circuit_break', 'a100-west')[0]).toMatchObject({ action: { open: true } });
    expect(find(recs, 'shift_traffic', 'a100-west')[0]!.action).toEqual({
      weights: { 'a100-west': 0, 'h100-east': 1 },
    });
  });

  test('a pool too slow to keep, whose peer could not carry all of its traffic, stays in rotation with the share the peer cannot take', async () => {
    // H100's 3,000-token prompts keep each replica prefilling 60% of the time: twice its load is more
    // than its two replicas can prefill at all. A100 still serves every request, slowly.
    const recs = await slowA100Beside(3000);
    expect(find(recs, 'circuit_break', 'a100-west')).toEqual([]);
    const shift = find(recs, 'shift_traffic', 'a100-west')[0]!;
    expect(shift.action.weights['a100-west']).toBeGreaterThan(0);
    expect(shift.action.weights['a100-west']).toBeLessThan(0.5);
  });

  test('a pool slow even at its fastest requests, hidden in a burst on every pool, is reported to a human', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // A burst queues on both pools with more load per replica, so H100's slower requests could be
    // load — except that even its fastest now prefill 2.5× slower than they used to.
    const burst = { queueMs: 3000, ratePerS: 3 };
    const [tick] = await runTicks(
      g,
      [
        { ...h100, ...burst, prefillMsPerToken: 0.625 },
        { ...a100, ...burst },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const shift = find(tick!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    expect(shift.reason).toMatch(/GPUs look slow: even its fastest requests prefill 2\.\d× slower/);
    expect(shift.state).toBe('proposed');
    expect(shift.waits).toMatch(/a human decides/);
    expect(
      shift.evidence.find((e) => e.signal === 'fastestPrefillVsFloor{pool=h100-east}')!.value,
    ).toBeGreaterThan(2);
    // H100 keeps the share its slowed engines carry (1 / 2.5 of its half).
    expect(shift.action.weights['h100-east']).toBeCloseTo(0.2, 1);
    expect(find(tick!.recommendations, 'circuit_break')).toEqual([]);
  });

  test('a pool that lost half its replicas keeps the share its ready replicas carry instead of being broken', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // Half of A100's replicas crashed and are being replaced: the requests on them failed.
    const crashed = { ...a100, readyReplicas: Math.floor(a100.replicas / 2), errorRate: 0.3 };
    const [tick] = await runTicks(g, [h100, crashed], WARM_UP_MS, WARM_UP_MS + 30_000);
    const recs = tick!.recommendations;
    expect(find(recs, 'circuit_break', 'a100-west')).toEqual([]);
    const shift = find(recs, 'shift_traffic', 'a100-west')[0]!;
    // A100 had half the weight; it keeps half of that (its ready share), H100 takes the rest.
    expect(shift.action).toEqual({ weights: { 'a100-west': 0.25, 'h100-east': 0.75 } });
  });

  /**
   * Scale actions auto-applied, H100 held at two replicas: A100, far inside the SLO at 1.5 requests/s
   * on three, is scaled in to its min_replicas of two. Growing it again inside the cooldown would be
   * a reversal. Its calm traffic.
   */
  async function probeA100Down(): Promise<PoolTraffic> {
    g = await startTestGovernor({
      pools: TEST_POOLS.map((p) => ({ ...p, min_replicas: 2 })),
      policies: [{ name: 'auto', match: { kind: ['scale'] }, auto_apply: true, min_confidence: 0 }],
    });
    const a100Calm = { ...a100, replicas: 3, ratePerS: 1.5 };
    const before = await runTicks(g, [h100, a100Calm], 0, 330_000);
    expect(scaleInsOver(before, 'a100-west')[0]).toMatchObject({
      action: { from: 3, to: 2 },
      state: 'applied',
    });
    return a100Calm;
  }

  test("traffic moves at once onto a peer inside its scale-in cooldown only when the peer's model says it carries it", async () => {
    // After A100's scale-in, H100 fails a fifth of its requests; A100 cannot grow inside its
    // cooldown, so half of H100's share (about 1 request/s) would move onto A100's two replicas.
    const shiftWith = async (a100Now: Partial<PoolTraffic>) => {
      const a100Calm = await probeA100Down();
      const [tick] = await runTicks(
        g!,
        [
          { ...h100, errorRate: 0.2 },
          { ...a100Calm, ...a100Now, replicas: 2 },
        ],
        330_000,
        360_000,
      );
      await g!.close();
      g = null;
      return find(tick!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    };
    // Its short prompts (0.4 s of prefill each at 1.5 requests/s on two replicas) replayed at the
    // added load stay within the SLO: the traffic moves now.
    const roomy = await shiftWith({});
    expect(roomy.reason).not.toMatch(/once they have room/);
    expect(roomy.waits ?? '').not.toMatch(/no room/);
    // Prompts of 2,400 tokens (0.96 s of prefill each) keep its replicas 72 % busy already; replayed
    // at the added load they queue past the SLO: the shift waits for room, or a human.
    const full = await shiftWith({ inputTokens: 2400 });
    expect(full.reason).toMatch(/once they have room/);
    expect(full.waits).toMatch(/no room/);
  });

  test('a pool that lost replicas keeps its part of the ready capacity when its peer cannot grow', async () => {
    const a100Calm = await probeA100Down();
    // Then one of H100's two replicas crashes (its replacement starting) and a fifth of its requests
    // fail. H100's one ready replica has carried 1 request/s calmly (0.8 of it now succeeding), each
    // of A100's two kept replicas 0.5: H100 keeps 0.8 / 1.8 of the model's traffic, not half of its
    // 57 % share (A100 would get more than it has ever carried, queue and fail in turn).
    const [tick] = await runTicks(
      g!,
      [
        { ...h100, readyReplicas: 1, errorRate: 0.2 },
        { ...a100Calm, replicas: 2 },
      ],
      330_000,
      360_000,
    );
    const shift = find(tick!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    const weights = shift.action.weights;
    expect(weights['h100-east']).toBeGreaterThan(0.4);
    expect(weights['h100-east']).toBeLessThan(0.49);
  });

  test('with every pool at max_replicas and requests timing out, new low-priority tasks are shed first', async () => {
    const priorities: [number, number][] = [
      [0, 0.3],
      [1, 0.3],
      [2, 0.4],
    ];
    const gov = await warmUpAtMaxReplicas({ priorities });
    // Overload that has turned into failures: 20% of requests time out, surely past the 5% error
    // budget on the short window's sample (a binomial test at evidenceLevel).
    const overloaded = { queueMs: 3000, priorities, errorRate: 0.2, failureOutcome: 'timeout' as const };
    const [tick] = await runTicks(gov, both(overloaded), WARM_UP_MS, WARM_UP_MS + 30_000);
    const shed = find(tick!.recommendations, 'shed_load')[0]!;
    expect(shed).toMatchObject({ target: { model: 'llama-8b' }, action: { minPriority: 1 } });
    expect(shed.reason).toMatch(/in-flight workflow steps keep running/);
    expect(find(tick!.recommendations, 'scale').filter((r) => r.action.to > r.action.from)).toEqual([]);
  });

  test('a shed class is readmitted once the pools carry it again, and no pool of the model is scaled in before', async () => {
    const priorities: [number, number][] = [
      [0, 0.3],
      [1, 0.3],
      [2, 0.4],
    ];
    g = await startTestGovernor({
      pools: TEST_POOLS.map((p) => ({ ...p, max_replicas: 2 })),
      policies: [{ name: 'auto', auto_apply: true, min_confidence: 0 }],
    });
    await runTicks(g, both({ priorities }), 0, WARM_UP_MS);
    const overloaded = { queueMs: 3000, priorities, errorRate: 0.2, failureOutcome: 'timeout' as const };
    const [storm] = await runTicks(g, both(overloaded), WARM_UP_MS, WARM_UP_MS + 30_000);
    expect(find(storm!.recommendations, 'shed_load')[0]).toMatchObject({
      action: { minPriority: 1 },
      state: 'applied',
    });
    // The overload is over: the pools serve their calm traffic again, far inside the SLO. Lifting the
    // shed reverses it, so it waits for the cooldown (300 s).
    const calm = await runTicks(g, both({ priorities }), WARM_UP_MS + 30_000, WARM_UP_MS + 480_000);
    const liftAt = calm.findIndex((t) =>
      find(t.recommendations, 'shed_load').some(
        (r) => r.action.minPriority === null && r.state === 'applied',
      ),
    );
    expect(liftAt, 'the shed class readmitted').toBeGreaterThanOrEqual(0);
    const beforeLift = calm.slice(0, liftAt + 1).flatMap((t) => t.recommendations);
    expect(find(beforeLift, 'scale').filter((r) => r.action.to < r.action.from)).toEqual([]);
  });

  test('a few stray errors on a model with little traffic shed nothing', async () => {
    const priorities: [number, number][] = [
      [0, 0.5],
      [1, 0.5],
    ];
    // One request a second per pool: queue-bound past the SLO at max_replicas, with 6-7% failing,
    // which here is four requests in the short window: too few to mean overload has turned into failures.
    const quiet = { ratePerS: 1, priorities };
    const gov = await warmUpAtMaxReplicas(quiet);
    const overloaded = { ...quiet, queueMs: 3000, errorRate: 0.06, failureOutcome: 'timeout' as const };
    const ticks = await runTicks(gov, both(overloaded), WARM_UP_MS, WARM_UP_MS + 60_000);
    expect(ticks.flatMap((t) => find(t.recommendations, 'shed_load'))).toEqual([]);
  });

  test("one faulty pool's errors shed no tasks: they are its fault, not the load's", async () => {
    const priorities: [number, number][] = [
      [0, 0.3],
      [1, 0.7],
    ];
    const gov = await warmUpAtMaxReplicas({ priorities });
    // Both pools queue at max_replicas; only A100 fails (30%) — against its peer, an outlier.
    const busy = { queueMs: 3000, priorities };
    const [tick] = await runTicks(
      gov,
      [
        { ...h100, ...busy },
        { ...a100, ...busy, errorRate: 0.3 },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    expect(find(tick!.recommendations, 'shift_traffic', 'a100-west')).toHaveLength(1);
    expect(find(tick!.recommendations, 'shed_load')).toEqual([]);
  });

  test('retries piling onto failures get a retry budget', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // Retries of failed requests landing on pools that already queue: the storm amplifies itself.
    const storm = { errorRate: 0.15, retryShare: 0.4, queueMs: 3000 };
    const [tick] = await runTicks(
      g,
      [
        { ...h100, ...storm },
        { ...a100, ...storm },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const budget = find(tick!.recommendations, 'retry_budget')[0]!;
    expect(budget).toMatchObject({ target: {}, action: { maxRetryRatio: 0.1 } });
    expect(budget.evidence.find((e) => e.signal === 'retryRatio')!.value).toBeGreaterThan(0.2);
  });

  test('a retry storm whose requests time out in a backlog gets a retry budget, and one of faults alone does not', async () => {
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // Requests that time out in a backlog finish no TTFT: the queueing shows in the timeouts, not in
    // the TTFT of the few that complete. Retries of them are load on load.
    const timingOut = { errorRate: 0.3, retryShare: 0.4, failureOutcome: 'timeout' as const };
    const [storm] = await runTicks(
      g,
      [
        { ...h100, ...timingOut },
        { ...a100, ...timingOut },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    expect(find(storm!.recommendations, 'retry_budget')[0]).toMatchObject({ action: { maxRetryRatio: 0.1 } });

    await g.close();
    g = await startTestGovernor();
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    // The same retries of requests that fail outright (a fault, not load): retries may fix those.
    const failing = { errorRate: 0.3, retryShare: 0.4, failureOutcome: 'error' as const };
    const [faults] = await runTicks(
      g,
      [
        { ...h100, ...failing },
        { ...a100, ...failing },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    expect(find(faults!.recommendations, 'retry_budget')).toEqual([]);
  });

  test('a big model stuck at max_replicas moves new tasks to a cheaper model with room', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'h100-70b', gpu_type: 'H100', gpus_per_replica: 4, model: 'llama-70b', max_replicas: 1 },
        { name: 'h100-8b', gpu_type: 'H100', model: 'llama-8b', peak_tokens_per_s_per_replica: 20_000 },
      ],
    });
    const big: PoolTraffic = {
      pool: 'h100-70b',
      model: 'llama-70b',
      replicas: 1,
      ratePerS: 1,
      prefillMsPerToken: 0.8,
    };
    const small: PoolTraffic = { pool: 'h100-8b', model: 'llama-8b', replicas: 2, ratePerS: 2 };
    await runTicks(g, [big, small], 0, WARM_UP_MS);
    const [tick] = await runTicks(g, [{ ...big, queueMs: 4000 }, small], WARM_UP_MS, WARM_UP_MS + 30_000);
    const downgrade = find(tick!.recommendations, 'downgrade_model')[0]!;
    expect(downgrade).toMatchObject({
      target: { model: 'llama-70b' },
      action: { fromModel: 'llama-70b', toModel: 'llama-8b', fraction: 0.25 },
    });
    expect(
      find(tick!.recommendations, 'scale', 'h100-70b').filter((r) => r.action.to > r.action.from),
    ).toEqual([]);
  });

  test('a memory-bound pool sends traffic to a peer with KV headroom instead of adding the same replicas', async () => {
    const peak = { peak_tokens_per_s_per_replica: 20_000 };
    g = await startTestGovernor({ pools: TEST_POOLS.map((p) => ({ ...p, ...peak })) });
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    const [tick] = await runTicks(
      g,
      [
        { ...h100, kvUsage: 0.95, queueMs: 3000 },
        { ...a100, kvUsage: 0.3 },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const shift = find(tick!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    expect(shift.reason).toMatch(/memory-bound/);
    const weights = shift.action.weights;
    expect(weights['h100-east']).toBeLessThan(0.5);
    expect(find(tick!.recommendations, 'scale', 'h100-east')).toEqual([]);
  });

  test('a cache-miss-bound pool moves traffic toward the pool that keeps prefixes warm', async () => {
    const peak = { peak_tokens_per_s_per_replica: 20_000 };
    g = await startTestGovernor({ pools: TEST_POOLS.map((p) => ({ ...p, ...peak })) });
    const slowPrefill = { prefillMsPerToken: 1.4 };
    await runTicks(
      g,
      [
        { ...h100, ...slowPrefill },
        { ...a100, ...slowPrefill },
      ],
      0,
      WARM_UP_MS,
    );
    const [tick] = await runTicks(
      g,
      [
        { ...h100, ...slowPrefill, cacheHitShare: 0 },
        { ...a100, ...slowPrefill, cacheHitShare: 0.9 },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const shift = find(tick!.recommendations, 'shift_traffic', 'h100-east')[0]!;
    expect(shift.reason).toMatch(/cache-miss-bound/);
    expect(shift.action.weights['a100-west']).toBeGreaterThan(0.5);
  });

  test('traffic moves toward the pool that serves the model for less per token', async () => {
    g = await startTestGovernor();
    // A100 at 0.6 ms per prompt token × $2.5 costs 1.5× what H100 at 0.25 ms × $4 does, and its
    // TTFT is no better: cost per successful task falls when H100 carries more of the model.
    const dearA100 = { ...a100, prefillMsPerToken: 0.6 };
    const ticks = await runTicks(g, [h100, dearA100], 0, WARM_UP_MS + 30_000);
    const recs = ticks.flatMap((t) => t.recommendations);
    const shift = find(recs, 'shift_traffic', 'a100-west')[0]!;
    expect(shift.reason).toMatch(/1\.\d+× the cost per token of h100-east/);
    const weights = shift.action.weights;
    // A quarter of A100's observed half of the traffic moves; weights still sum to 1.
    expect(weights['a100-west']).toBeCloseTo(0.375, 1);
    expect(weights['a100-west']! + weights['h100-east']!).toBeCloseTo(1, 5);
    // H100 was picked because it has room: it is not scaled up for the move (only if it turns load-bound).
    expect(find(recs, 'scale', 'h100-east').filter((r) => r.action.to > r.action.from)).toEqual([]);
  });

  test('scale-in only where N−1 replicas hold the SLO, never to zero under traffic', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'light', gpu_type: 'H100', model: 'm-light' },
        { name: 'slow', gpu_type: 'H100', model: 'm-slow' },
        { name: 'slow-pair', gpu_type: 'H100', model: 'm-slow-pair' },
        { name: 'single', gpu_type: 'H100', model: 'm-single' },
        { name: 'idle', gpu_type: 'H100', model: 'm-idle' },
        { name: 'sized-ok', gpu_type: 'H100', model: 'm-ok', peak_tokens_per_s_per_replica: 400 },
        { name: 'sized-tight', gpu_type: 'H100', model: 'm-tight', peak_tokens_per_s_per_replica: 333 },
      ],
    });
    const traffic: PoolTraffic[] = [
      { pool: 'light', model: 'm-light', replicas: 4, ratePerS: 2 },
      // 1.3 s of prefill a second: two replicas carry it (the replay checks that too).
      { pool: 'slow', model: 'm-slow', replicas: 3, ratePerS: 1, prefillMsPerToken: 1.3 },
      { pool: 'slow-pair', model: 'm-slow-pair', replicas: 2, ratePerS: 1.3, prefillMsPerToken: 1.3 },
      { pool: 'single', model: 'm-single', replicas: 1, ratePerS: 1 },
      { pool: 'idle', model: 'm-idle', replicas: 3, ratePerS: 0 },
      { pool: 'sized-ok', model: 'm-ok', replicas: 4, ratePerS: 8 },
      { pool: 'sized-tight', model: 'm-tight', replicas: 4, ratePerS: 8 },
    ];
    const ticks = await runTicks(g, traffic, 0, 330_000);
    const recs = ticks.flatMap((t) => t.recommendations);
    const scaleIn = (pool: string) => find(recs, 'scale', pool).filter((r) => r.action.to < r.action.from);
    // Light load far inside the SLO: fewer replicas, and the reason says how many.
    const light = expectScaleInFrom(scaleIn('light')[0], 4);
    expect(scaleIn('light')[0]!.reason).toContain(`(4 → ${light})`);
    // TTFT near the SLO but made of the prompts' own prefill (uncontended, no queue): 1.3 s of prefill
    // a second needs two replicas, so it keeps two.
    expect(expectScaleInFrom(scaleIn('slow')[0], 3)).toBe(2);
    expect(scaleIn('slow-pair')).toEqual([]);
    expect(scaleIn('single')).toEqual([]);
    // No traffic: down to min_replicas (1), not to zero.
    expect(scaleIn('idle')[0]).toMatchObject({ action: { from: 3, to: 1 } });
    // Known capacity (configured peak): fewer replicas only as far as utilization stays under the
    // target of 0.7; at 0.6 on four, three would not.
    const ok = scaleIn('sized-ok')[0]!;
    expectScaleInFrom(ok, 4);
    const after = ok.evidence.find((e) => e.signal.startsWith('utilizationAtNMinus1{'));
    expect(after!.value).toBeLessThanOrEqual(0.7);
    expect(scaleIn('sized-tight')).toEqual([]);
    expect((await latest()).every((r) => r.kind !== 'scale' || (r.action.to as number) >= 1)).toBe(true);
  });

  test('Governor started on a store that already holds a window of telemetry does not watch one more itself', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'light', gpu_type: 'H100', model: 'm-light' },
        { name: 'idle', gpu_type: 'H100', model: 'm-idle' },
      ],
    });
    const traffic: PoolTraffic[] = [
      { pool: 'light', model: 'm-light', replicas: 4, ratePerS: 2 },
      { pool: 'idle', model: 'm-idle', replicas: 3, ratePerS: 0 },
    ];
    // Five and a half minutes of telemetry, then the first tick (a Governor restarted on its store).
    await sendTraffic(g.url, traffic, T0_MS, T0_MS + 330_000);
    const first = await g.evaluate(T0_MS + 330_000);
    expect(scaleInsOver([first], 'idle').map((r) => r.action)).toEqual([{ from: 3, to: 1 }]);
  });

  test('an idle pool is scaled in on the silence Governor has seen, less surely than on a whole window of it', async () => {
    g = await startTestGovernor({ pools: [{ name: 'idle', gpu_type: 'H100', model: 'm-idle' }] });
    const traffic: PoolTraffic[] = [
      { pool: 'light', model: 'm-light', replicas: 4, ratePerS: 2 },
      { pool: 'idle', model: 'm-idle', replicas: 3, ratePerS: 0 },
    ];
    // The store's telemetry begins at 0 and the ticks come every 30 s: a control interval of silence
    // is the first evidence, not the whole 5-minute window.
    const ticks = await runTicks(g, traffic, 0, 330_000);
    const at = ticks.findIndex((t) => scaleInsOver([t], 'idle').length > 0);
    expect(at).toBeGreaterThanOrEqual(0);
    expect((at + 1) * 30_000).toBeLessThanOrEqual(60_000);
    const early = scaleInsOver([ticks[at]!], 'idle')[0]!;
    expect(early.action).toMatchObject({ from: 3, to: 1 });
    expect(early.reason).toMatch(/no requests in the last \d+ s \(all Governor has seen\)/);
    // Restarted on that store, Governor sees the whole window of silence at once: surer.
    await g.close();
    g = await startTestGovernor({ pools: [{ name: 'idle', gpu_type: 'H100', model: 'm-idle' }] });
    await sendTraffic(g.url, traffic, T0_MS, T0_MS + 330_000);
    const whole = scaleInsOver([await g.evaluate(T0_MS + 330_000)], 'idle')[0]!;
    expect(whole.confidence).toBeGreaterThan(early.confidence);
  });

  test('a scale-in is replayed on its own requests first: long prompts that would hold up a lone replica keep the second', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'even', gpu_type: 'H100', model: 'm-even' },
        { name: 'tailed', gpu_type: 'H100', model: 'm-tailed' },
      ],
    });
    // The same prefill work per second (about half a replica), far inside the SLO on two replicas.
    // On one, a 30k-token prompt every 30 s (7.5 s of prefill) holds up the prompts behind it.
    const traffic: PoolTraffic[] = [
      { pool: 'even', model: 'm-even', replicas: 2, ratePerS: 1, inputTokens: 2000 },
      {
        pool: 'tailed',
        model: 'm-tailed',
        replicas: 2,
        ratePerS: 1,
        inputTokens: 1000,
        longPrompt: { every: 30, tokens: 30_000 },
      },
    ];
    const ticks = await runTicks(g, traffic, 0, 330_000);
    const recs = ticks.flatMap((t) => t.recommendations);
    const scaleIn = (pool: string) => find(recs, 'scale', pool).filter((r) => r.action.to < r.action.from);
    // Its TTFT p95 is far inside the SLO too, and its prefill work per second the same as the even
    // pool's: only the replay tells them apart.
    expect(scaleIn('tailed')).toEqual([]);
    const even = scaleIn('even')[0]!;
    expect(even.action).toEqual({ from: 2, to: 1 });
    expect(even.reason).toMatch(
      /requests replayed on 1 replica: TTFT p95 \d+ → \d+ ms, 100% → 100% of its tasks within the SLO/,
    );
    expect(
      even.evidence.find((e) => e.signal === 'replayedWithinSloShare{pool=even,replicas=1}')?.value,
    ).toBe(1);
  });

  test('a pool whose prefill load stretches every prompt token learns its capacity from it', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'chunked', gpu_type: 'H100', model: 'm-chunked' },
        { name: 'long-mix', gpu_type: 'H100', model: 'm-long-mix' },
      ],
    });
    // Chunked prefill: a loaded engine admits at once (no queue) and each prompt token takes longer.
    const calm = (pool: string, model: string): PoolTraffic => ({
      pool,
      model,
      replicas: 2,
      ratePerS: 1,
      inputTokens: 3000,
    });
    await runTicks(g, [calm('chunked', 'm-chunked'), calm('long-mix', 'm-long-mix')], 0, WARM_UP_MS);
    const ticks = await runTicks(
      g,
      [
        // Twice the load per replica it served calmly, prefill 3× slower per token.
        { ...calm('chunked', 'm-chunked'), ratePerS: 2, prefillMsPerToken: 0.75 },
        // As slow per token at its usual load: the prompts changed, not the load.
        { ...calm('long-mix', 'm-long-mix'), prefillMsPerToken: 0.75 },
      ],
      WARM_UP_MS,
      WARM_UP_MS + 60_000,
    );
    const utilization = (i: number, pool: string) =>
      find(ticks[i]!.recommendations, 'scale', pool)[0]!.evidence.find((e) =>
        e.signal.startsWith('utilization{'),
      )!;
    // First sight: no queue, so before this the pool never looked saturated; its capacity is unknown.
    expect(utilization(0, 'chunked').signal).not.toContain('learned_capacity');
    // Having served ~1 request/s per replica at 3× its idle prefill time, it knows its capacity.
    expect(utilization(1, 'chunked').signal).toBe('utilization{pool=chunked,basis=learned_capacity}');
    expect(utilization(1, 'chunked').value).toBeGreaterThan(0.9);
    expect(utilization(1, 'chunked').value).toBeLessThan(1.2);
    expect(utilization(1, 'long-mix').signal).not.toContain('learned_capacity');
  });

  test('a pool queueing past the SLO below the capacity it learned on shorter prompts grows with the pressure', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'mixed', gpu_type: 'H100', model: 'm-mixed' },
        { name: 'erring', gpu_type: 'H100', model: 'm-erring' },
      ],
    });
    // Short prompts at 2 requests/s per replica, the median request queueing: each pool learns that
    // as its capacity.
    const short = (pool: string): PoolTraffic => ({
      pool,
      model: `m-${pool}`,
      replicas: 2,
      ratePerS: 4,
      queueMs: 1000,
    });
    await runTicks(g, [short('mixed'), short('erring')], 0, WARM_UP_MS);
    // Then 8k-token prompts at half that rate queue 4 s: the learned capacity (in requests) says the
    // pool is half used, its TTFT says it is three times past the SLO.
    const long = (pool: string) => ({ ...short(pool), ratePerS: 2, inputTokens: 8000, queueMs: 4000 });
    const [tick] = await runTicks(
      g,
      [long('mixed'), { ...long('erring'), errorRate: 0.3 }],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    const up = (pool: string) =>
      find(tick!.recommendations, 'scale', pool).filter((r) => r.action.to > r.action.from)[0]!;
    expect(up('mixed').evidence.find((e) => e.signal.startsWith('utilization{'))!.signal).toContain(
      'learned_capacity',
    );
    // Sized by the learned capacity it would be 2 → 3; the pressure (capped at 2× a step) says 2 → 4.
    expect(up('mixed').action).toEqual({ from: 2, to: 4 });
    // A pool whose requests fail is sized by its capacity: its latency is errors and retries too.
    expect(up('erring').action).toEqual({ from: 2, to: 3 });
  });

  test('a scale-in whose replicas are still draining is not asked for again', async () => {
    g = await startTestGovernor({
      pools: [{ name: 'light', gpu_type: 'H100', model: 'm-light' }],
      policies: [{ name: 'auto', match: { kind: ['scale'] }, auto_apply: true }],
    });
    const light: PoolTraffic = { pool: 'light', model: 'm-light', replicas: 4, ratePerS: 2 };
    const ticks = await runTicks(g, [light], 0, 330_000);
    const applied = ticks.flatMap((t) => t.actions).filter((a) => a.kind === 'scale');
    expect(applied).toHaveLength(1);
    expect((applied[0]!.action as { from: number }).from).toBe(4);
    expect((applied[0]!.action as { to: number }).to).toBeLessThan(4);
    // The gauges still count 4 replicas paid for while the removed ones finish their requests.
    const later = await runTicks(g, [light], 330_000, 450_000);
    expect(later.flatMap((t) => find(t.recommendations, 'scale', 'light'))).toEqual([]);
  });

  /**
   * Two pools warmed up calm ('long' with `longWarmUp` on top), then both queueing 3 s (with `jammed`
   * on top) for one tick: 'short' prompts come back within the 2 s SLO once they stop queueing;
   * 'long' ones, 12k tokens at 0.25 ms per token, take 3 s of prefill on an idle replica and miss it
   * anyway. Their scale-ups that tick.
   */
  async function queueShortAndLong(jammed: Partial<PoolTraffic>, longWarmUp: Partial<PoolTraffic> = {}) {
    g = await startTestGovernor({
      pools: [
        { name: 'short', gpu_type: 'H100', model: 'm-short' },
        { name: 'long', gpu_type: 'H100', model: 'm-long' },
      ],
    });
    const short: PoolTraffic = { pool: 'short', model: 'm-short', replicas: 2, ratePerS: 2 };
    const long: PoolTraffic = { ...short, pool: 'long', model: 'm-long', inputTokens: 12_000 };
    await runTicks(g, [short, { ...long, ...longWarmUp }], 0, WARM_UP_MS);
    const [tick] = await runTicks(
      g,
      // Queueing clearly past half of TTFT on both (a part that stretches it slowRatio×): load-bound.
      [short, long].map((p) => ({ ...p, queueMs: 5000, ...jammed })),
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    return (pool: string) => scaleUpsOver([tick!], pool)[0]!;
  }

  test('a scale-up cannot win back more tasks within the SLO than the pool met when it was calm', async () => {
    const up = await queueShortAndLong({});
    // Both are queue-bound past the SLO; only the short prompts come back within it.
    expect(up('short').waits ?? null).toBeNull();
    expect(up('long').waits).toMatch(/a human decides/);
    expect(up('long').reason).toMatch(/fewer tasks within the SLO than it costs/);
    // Evidence: its goodput now, against what it met when calm (a few requests of jitter).
    const goodput = up('long').evidence.find((e) => e.signal === 'goodput{pool=long}')!;
    expect(goodput.value).toBe(0);
    expect(goodput.threshold).toBeLessThan(0.1);
  });

  test('a pool never calm is weighed by the share of its prompts that prefill within the SLO at its uncontended speed', async () => {
    // Queueing from the start: the long pool has no calm goodput to cap what replicas win back.
    const up = await queueShortAndLong({}, { queueMs: 3000 });
    expect(up('short').waits ?? null).toBeNull();
    const reachable = (pool: string) =>
      up(pool).evidence.find((e) => e.signal === `promptsPrefillingWithinSlo{pool=${pool}}`)!.value;
    expect(reachable('short')).toBe(1);
    // Not one of the long prompts prefills within the SLO even uncontended: no replica wins them.
    expect(reachable('long')).toBe(0);
    expect(up('long').reason).toMatch(/fewer tasks within the SLO than it costs/);
    expect(up('long').waits).toMatch(/a human decides/);
  });

  test('when no task of the fleet is within the SLO, replicas that bring none within it wait for a human', async () => {
    // Only long prompts, queued from the start: nothing meets the SLO, and none of them would
    // uncontended either, so the fleet earns 0 tasks within the SLO per dollar now and with more
    // replicas — no gain, only cost.
    g = await startTestGovernor({ pools: [{ name: 'long', gpu_type: 'H100', model: 'm-long' }] });
    const long: PoolTraffic = {
      pool: 'long',
      model: 'm-long',
      replicas: 2,
      ratePerS: 2,
      inputTokens: 12_000,
    };
    const queued = { ...long, queueMs: 3000 };
    await runTicks(g, [queued], 0, WARM_UP_MS);
    const [tick] = await runTicks(g, [queued], WARM_UP_MS, WARM_UP_MS + 30_000);
    const up = scaleUpsOver([tick!], 'long')[0]!;
    expect(up.evidence.find((e) => e.signal === 'tasksWithinSloPerUsd')?.value).toBe(0);
    expect(up.reason).toMatch(/fewer tasks within the SLO than it costs/);
    expect(up.waits).toMatch(/a human decides/);
  });

  test('a failing pool is weighed as any other: replicas win back its timeouts from queueing, not the tasks its long prompts miss anyway', async () => {
    // Both also time out a third of their requests.
    const up = await queueShortAndLong({ errorRate: 0.35, failureOutcome: 'timeout' });
    // The short prompts come back within the SLO once they stop queueing: worth the replicas.
    expect(up('short').waits ?? null).toBeNull();
    expect(up('short').reason).not.toMatch(/fewer tasks within the SLO/);
    // The long ones miss it anyway: their failures do not make the replicas pay.
    expect(up('long').reason).toMatch(/fewer tasks within the SLO than it costs/);
    expect(up('long').waits).toMatch(/a human decides/);
  });

  test('a scale-up is weighed on the rates of one window: as Governor starts, a costly one that wins few tasks waits for a human', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'small', gpu_type: 'H100', model: 'm-small' },
        { name: 'big', gpu_type: 'H100', model: 'm-big', gpus_per_replica: 4 },
      ],
    });
    // One minute of traffic, so the 5-minute control window is a fifth full: read over it, every
    // rate is a fifth of the short window's. Compared with the pool's short-window rate, the fleet's
    // tasks within the SLO looked five times fewer and the 4-GPU replicas worth their cost.
    const small: PoolTraffic = { pool: 'small', model: 'm-small', replicas: 2, ratePerS: 4 };
    const big: PoolTraffic = { pool: 'big', model: 'm-big', replicas: 2, ratePerS: 1, queueMs: 3000 };
    const ticks = await runTicks(g, [small, big], 0, 60_000);
    const up = find(ticks.at(-1)!.recommendations, 'scale', 'big').filter((r) => r.action.to > r.action.from);
    expect(up).toHaveLength(1);
    // Two more 4-GPU replicas ($32/h on a $40/h fleet) win back at most the big pool's 1 request/s of
    // the fleet's 5: fewer tasks within the SLO per dollar.
    expect(up[0]!.action).toEqual({ from: 2, to: 4 });
    expect(up[0]!.reason).toMatch(/fewer tasks within the SLO than it costs/);
    expect(up[0]!.waits).toMatch(/a human decides/);
    const before = up[0]!.evidence.find((e) => e.signal === 'tasksWithinSloPerUsd')!.value!;
    const after = up[0]!.evidence.find((e) => e.signal === 'tasksWithinSloPerUsdAfter')!.value!;
    expect(after / before).toBeGreaterThan(0.6);
    expect(after / before).toBeLessThan(1);
  });

  test("a peer's proposed scale-up is not the spare that lets a pool go down to one replica", async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'a-queued', gpu_type: 'H100', model: 'm' },
        { name: 'b-light', gpu_type: 'H100', model: 'm' },
      ],
    });
    const queued: PoolTraffic = { pool: 'a-queued', model: 'm', replicas: 1, ratePerS: 0.5 };
    const light: PoolTraffic = { pool: 'b-light', model: 'm', replicas: 2, ratePerS: 1 };
    await runTicks(g, [queued, light], 0, 300_000);
    // The tick where the store covers a whole window of b-light: a-queued, on one replica, now queues.
    const [tick] = await runTicks(g, [{ ...queued, queueMs: 3000 }, light], 300_000, 330_000);
    const scale = (pool: string, up: boolean) =>
      find(tick!.recommendations, 'scale', pool).filter((r) => r.action.to > r.action.from === up);
    // a-queued asks for a second replica, but it is not there until it lands.
    expect(scale('a-queued', true)).toHaveLength(1);
    expect(scale('b-light', false)).toEqual([]);
  });

  test('one scale-in per model at a time: a peer waits until the first is verified', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'twin-a', gpu_type: 'H100', model: 'm-twin' },
        { name: 'twin-b', gpu_type: 'H100', model: 'm-twin' },
      ],
      policies: [{ name: 'auto', match: { kind: ['scale'] }, auto_apply: true, min_confidence: 0 }],
    });
    // Both far inside the SLO with no queue: each on its own would be scaled in.
    const twin = (pool: string): PoolTraffic => ({ pool, model: 'm-twin', replicas: 3, ratePerS: 1.5 });
    const ticks = await runTicks(g, [twin('twin-a'), twin('twin-b')], 0, 540_000);
    const a = scaleInsOver(ticks, 'twin-a');
    const b = scaleInsOver(ticks, 'twin-b');
    // The first is applied; the other pool is its spare until verification has judged it.
    const scaleIns = [...a, ...b];
    expect(scaleIns).toHaveLength(1);
    expectScaleInFrom(scaleIns[0], 3, 'applied');
  });

  test('a peer waits for the first scale-in to be judged, which waits out the cooldown, not only verify_after_s', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'twin-a', gpu_type: 'H100', model: 'm-twin' },
        { name: 'twin-b', gpu_type: 'H100', model: 'm-twin' },
      ],
      control: { verify_after_s: 60 },
      policies: [{ name: 'auto', match: { kind: ['scale'] }, auto_apply: true, min_confidence: 0 }],
    });
    const twin = (pool: string): PoolTraffic => ({ pool, model: 'm-twin', replicas: 3, ratePerS: 1.5 });
    const early = await runTicks(g, [twin('twin-a'), twin('twin-b')], 0, 570_000);
    // verify_after_s is long past, but the first scale-in is not judged until its cooldown is over.
    const first = [
      ...new Map(
        [...scaleInsOver(early, 'twin-a'), ...scaleInsOver(early, 'twin-b')].map((r) => [r.id, r]),
      ).values(),
    ];
    expect(first).toHaveLength(1);
    expectScaleInFrom(first[0], 3, 'applied');
    const late = await runTicks(g, [twin('twin-a'), twin('twin-b')], 570_000, 750_000);
    const pool = first[0]!.target.pool!;
    const peer = pool === 'twin-a' ? 'twin-b' : 'twin-a';
    const judged = late.flatMap((t) => t.recommendations).find((r) => r.id === first[0]!.id && r.verifiedAt);
    expect(judged?.state).toBe('verified');
    for (const r of scaleInsOver(late, peer).filter((r) => r.appliedAt)) {
      expect(Date.parse(r.appliedAt!)).toBeGreaterThanOrEqual(Date.parse(judged!.verifiedAt!));
    }
  });

  test("a scale-in's replicas draining unevenly do not restart its cooldown", async () => {
    g = await startTestGovernor({
      pools: [{ name: 'drain', gpu_type: 'H100', model: 'm-drain', min_replicas: 2 }],
      policies: [{ name: 'auto', match: { kind: ['scale'] }, auto_apply: true, min_confidence: 0 }],
    });
    const pool: PoolTraffic = { pool: 'drain', model: 'm-drain', replicas: 3, ratePerS: 1.5 };
    const calm = await runTicks(g, [pool], 0, 330_000);
    // Far inside the SLO with no queue: probed one replica down.
    const scaleIn = scaleInsOver(calm, 'drain')[0]!;
    expect(scaleIn).toMatchObject({ action: { from: 3, to: 2 }, state: 'applied' });
    const t = Date.parse(scaleIn.appliedAt!) - T0_MS;
    // The removed replica drains for a minute; the next minute the pool's replica count (a mean
    // over the short window) reads 3 again before settling at 2.
    await runTicks(g, [pool], 330_000, t + 60_000);
    await runTicks(g, [{ ...pool, replicas: 2 }], t + 60_000, t + 150_000);
    await runTicks(g, [pool], t + 150_000, t + 210_000);
    await runTicks(g, [{ ...pool, replicas: 2 }], t + 210_000, t + 360_000);
    // Verification finds no harm; then its requests queue past the SLO. The scale-in's cooldown is
    // over, so the pool grows again at once.
    const queued = await runTicks(g, [{ ...pool, replicas: 2, queueMs: 3000 }], t + 360_000, t + 450_000);
    expect(scaleUpsOver(queued, 'drain')[0]).toMatchObject({
      state: 'applied',
      action: { from: 2 },
    });
  });

  test('a pool dark in a region outage keeps its replicas, and is not scaled in on the window it was dark in', async () => {
    g = await startTestGovernor({
      pools: TEST_POOLS.map((p) => (p.name === 'h100-east' ? { ...p, min_replicas: 3 } : p)),
      policies: [{ name: 'auto', match: { kind: ['scale'] }, auto_apply: true, min_confidence: 0 }],
    });
    // Far inside the SLO with no queue: on its own A100 would be scaled in.
    const east: PoolTraffic = { ...h100, replicas: 3, ratePerS: 1.5 };
    const west: PoolTraffic = { ...a100, replicas: 3, ratePerS: 1.5 };
    await runTicks(g, [east, west], 0, WARM_UP_MS);
    // Its region goes dark for six minutes: no replica reports, no request reaches it, its peer
    // serves the model's traffic. It is not idle — the traffic comes back to it.
    const dark = await runTicks(
      g,
      [
        { ...east, ratePerS: 3 },
        { ...west, readyReplicas: 0, ratePerS: 0 },
      ],
      WARM_UP_MS,
      540_000,
    );
    expect(scaleInsOver(dark, 'a100-west')).toEqual([]);
    // Back, and calm: the window still holds the minutes it was dark, so it waits a whole window.
    const back = await runTicks(g, [east, west], 540_000, 810_000);
    expect(scaleInsOver(back, 'a100-west')).toEqual([]);
    const later = await runTicks(g, [east, west], 810_000, 900_000);
    expectScaleInFrom(scaleInsOver(later, 'a100-west')[0], 3);
  });

  test('a pool a shift just gave a much bigger share is not scaled in on the window from before it', async () => {
    g = await startTestGovernor({
      // Scale actions are only proposed: H100 keeps its replicas whatever is planned for it.
      policies: [{ name: 'auto', match: { kind: ['shift_traffic'] }, auto_apply: true, min_confidence: 0 }],
    });
    // Far inside the SLO with no queue: on its own H100 would be scaled in.
    const east: PoolTraffic = { ...h100, replicas: 3, ratePerS: 1.5 };
    const west: PoolTraffic = { ...a100, replicas: 3, ratePerS: 1.5 };
    await runTicks(g, [east, west], 0, WARM_UP_MS);
    // A100 fails 15% of its requests: most of its traffic moves to H100, which now carries more.
    const incident = await runTicks(g, [east, { ...west, errorRate: 0.15 }], WARM_UP_MS, WARM_UP_MS + 60_000);
    const shift = find(
      incident.flatMap((t) => t.recommendations),
      'shift_traffic',
      'a100-west',
    ).find((r) => r.state === 'applied')!;
    expect(shift.action.weights['h100-east']).toBeGreaterThanOrEqual(0.8);
    const shiftedAt = Date.parse(shift.appliedAt!) - T0_MS;
    const after = await runTicks(
      g,
      [
        { ...east, ratePerS: 2.6 },
        { ...west, ratePerS: 0.4 },
      ],
      WARM_UP_MS + 60_000,
      shiftedAt + 270_000,
    );
    expect(scaleInsOver(after, 'h100-east')).toEqual([]);
    // A window on, it has shown the load it carries now: calm, it is scaled in as usual.
    const later = await runTicks(
      g,
      [
        { ...east, ratePerS: 2.6 },
        { ...west, ratePerS: 0.4 },
      ],
      shiftedAt + 270_000,
      shiftedAt + 360_000,
    );
    expectScaleInFrom(scaleInsOver(later, 'h100-east')[0], 3);
  });

  test('a calm pool is not scaled in while a retry storm could multiply its requests', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'calm', gpu_type: 'H100', model: 'm-calm' },
        { name: 'stormy', gpu_type: 'H100', model: 'm-storm' },
      ],
    });
    // Far inside the SLO with no queue: on its own it would be scaled in.
    const calm: PoolTraffic = { pool: 'calm', model: 'm-calm', replicas: 4, ratePerS: 2 };
    const stormy: PoolTraffic = { pool: 'stormy', model: 'm-storm', replicas: 2, ratePerS: 2 };
    // Another model's requests fail and are retried: retries are 1/3 of first attempts fleet-wide.
    const storm = { errorRate: 0.15, retryShare: 0.4 };
    const during = await runTicks(g, [calm, { ...stormy, ...storm }], 0, 420_000);
    expect(scaleInsOver(during, 'calm')).toEqual([]);
    // Once the storm is over the same pool is scaled in as usual.
    const after = await runTicks(g, [calm, stormy], 420_000, 600_000);
    expectScaleInFrom(scaleInsOver(after, 'calm')[0], 4);
  });

  test("a pool whose traffic was just moved off for an incident is not scaled up inside that shift's cooldown", async () => {
    g = await startTestGovernor({
      policies: [
        { name: 'incident', match: { kind: ['shift_traffic'] }, auto_apply: true, min_confidence: 0 },
      ],
    });
    await runTicks(g, [h100, a100], 0, WARM_UP_MS);
    const [incident] = await runTicks(
      g,
      [h100, { ...a100, errorRate: 0.3 }],
      WARM_UP_MS,
      WARM_UP_MS + 30_000,
    );
    expect(find(incident!.recommendations, 'shift_traffic', 'a100-west')[0]!.state).toBe('applied');
    // The errors stop, but what A100 still serves queues past the SLO: its peer took the share it
    // could not serve, and more replicas of the pool that just failed are not what its model needs.
    const after = await runTicks(
      g,
      [h100, { ...a100, queueMs: 3000 }],
      WARM_UP_MS + 30_000,
      WARM_UP_MS + 180_000,
    );
    expect(scaleUpsOver(after, 'a100-west')).toEqual([]);
    // Past the shift's cooldown the pool is judged like any other: still queueing, it grows.
    const later = await runTicks(
      g,
      [h100, { ...a100, queueMs: 3000 }],
      WARM_UP_MS + 180_000,
      WARM_UP_MS + 420_000,
    );
    expect(scaleUpsOver(later, 'a100-west').length).toBeGreaterThan(0);
  });

  test('a pool left with a trickle of requests, too few to judge, is sized to a load it carried calmly', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'trickle', gpu_type: 'H100', model: 'm-trickle' },
        { name: 'trickle-failing', gpu_type: 'H100', model: 'm-trickle-failing' },
      ],
    });
    const busy: PoolTraffic[] = [
      { pool: 'trickle', model: 'm-trickle', replicas: 6, ratePerS: 2 },
      { pool: 'trickle-failing', model: 'm-trickle-failing', replicas: 6, ratePerS: 2 },
    ];
    // Calm at a third of a request per second per replica: a load each replica is known to carry.
    await runTicks(g, busy, 0, 300_000);
    // Then 9 requests in five minutes, on one pool all served, on the other a third failing.
    const quiet = await runTicks(
      g,
      [
        { ...busy[0]!, ratePerS: 0.03 },
        { ...busy[1]!, ratePerS: 0.03, errorRate: 0.34 },
      ],
      300_000,
      630_000,
    );
    const sparse = scaleInsOver(quiet, 'trickle').filter((r) => /too few to judge/.test(r.reason));
    // One request every half minute needs one replica; half the replicas go at most at a time.
    expect(sparse[0]).toMatchObject({ action: { from: 6, to: 3 } });
    expect(sparse[0]!.reason).toMatch(/served only \d+ requests in the last 5m/);
    expect(scaleInsOver(quiet, 'trickle-failing').filter((r) => /too few to judge/.test(r.reason))).toEqual(
      [],
    );
  });

  test('a pool goes down to one replica only while its peers serving the model keep two', async () => {
    g = await startTestGovernor({
      pools: [
        { name: 'pair-a', gpu_type: 'H100', model: 'm-pair' },
        { name: 'pair-b', gpu_type: 'H100', model: 'm-pair' },
        { name: 'lean-a', gpu_type: 'H100', model: 'm-lean' },
        { name: 'lean-b', gpu_type: 'H100', model: 'm-lean' },
      ],
    });
    // All far inside the SLO with no queue: each would be probed one replica down on its own.
    const traffic: PoolTraffic[] = [
      { pool: 'pair-a', model: 'm-pair', replicas: 2, ratePerS: 1 },
      { pool: 'pair-b', model: 'm-pair', replicas: 2, ratePerS: 1 },
      { pool: 'lean-a', model: 'm-lean', replicas: 2, ratePerS: 1 },
      { pool: 'lean-b', model: 'm-lean', replicas: 1, ratePerS: 0.5 },
    ];
    const ticks = await runTicks(g, traffic, 0, 330_000);
    // Nothing applies a proposal: it stays open, listed again at each tick; each decision counts once.
    const recs = [...new Map(ticks.flatMap((t) => t.recommendations).map((r) => [r.id, r])).values()];
    const scaleIn = (pool: string) => find(recs, 'scale', pool).filter((r) => r.action.to < r.action.from);
    // One of the pair may go to one replica, the other then keeps two: never both, at no tick.
    expect([...scaleIn('pair-a'), ...scaleIn('pair-b')].map((r) => r.action)).toEqual([{ from: 2, to: 1 }]);
    // lean-b already rests on one replica: lean-a keeps two so losing any one replica leaves two.
    expect(scaleIn('lean-a')).toEqual([]);
    expect(scaleIn('lean-b')).toEqual([]);
  });
});
