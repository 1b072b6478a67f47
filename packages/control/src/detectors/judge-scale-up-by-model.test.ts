import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ControlConfig } from '@governor/conventions';
import type { RequestArrival } from '@governor/signals';
import { createEmptyState, type PoolLearning } from '../engine/control-types.ts';
import { DEFAULT_TUNING } from '../engine/control-tuning.ts';
import { FIXTURE_MS_PER_TOKEN, servedOn } from '../model/served-on-fixture.ts';
import type { PoolView } from '../observe-fleet.ts';
import type { DetectContext } from './detect-context.ts';
import { judgeScaleUpByModel, planPoolSize } from './judge-scale-up-by-model.ts';
import type { ScaleInputs } from './scale-inputs.ts';

// The scale-up the pool model asks for, judged on requests a first-come-first-served pool really
// served (servedOn): properties a user would notice, not particular counts.

const WINDOW_S = 300;
const control = ControlConfig.parse({});

function learned(): PoolLearning {
  return {
    peakRatePerReplica: null,
    saturatedRatePerReplica: null,
    calmRatePerReplica: null,
    calmGoodput: null,
    speedBaseline: null,
    loadBaselinePerReplicaPerS: null,
    prefillFloorMsPerToken: FIXTURE_MS_PER_TOKEN,
    fastestPrefillFloorMsPerToken: FIXTURE_MS_PER_TOKEN,
    engineFit: null,
    engineSlowAtNs: null,
    darkAtNs: null,
    healthySamples: DEFAULT_TUNING.minBaselineSamples,
    outlierStreak: 0,
    capacitiesAtNs: null,
  };
}

/**
 * One pool that served `arrivals` on `replicas` over the control window, at their own rate; over the
 * last minute the load is `rise` × that (a rising load the forecast carries forward).
 */
function setting(
  arrivals: RequestArrival[],
  replicas: number,
  slo: { ttft_ms?: number; e2e_ms?: number },
  rise = 1,
  ceiling = 16,
): { ctx: DetectContext; s: ScaleInputs } {
  // As observe-fleet reads them: the window's count over the whole window (the requests may span
  // less of it), the short window's over the short window.
  const spanMs = Math.max(1, arrivals.at(-1)!.arriveMs - arrivals[0]!.arriveMs);
  const mainRatePerS = arrivals.length / WINDOW_S;
  const ratePerS = (rise * (arrivals.length - 1) * 1000) / spanMs;
  const pool: PoolView = {
    pool: 'p',
    model: 'm',
    region: null,
    gpuType: 'H100',
    main: null,
    fast: null,
    prefillMsPerToken: FIXTURE_MS_PER_TOKEN,
    fastestPrefillMsPerToken: FIXTURE_MS_PER_TOKEN,
    engineWork: null,
    arrivals,
    replicas,
    readyReplicas: replicas,
    minReplicas: 1,
    maxReplicas: ceiling,
    gpusPerReplica: 1,
    gpuHourUsd: 4,
    peakConfigured: false,
    mainRatePerS,
    fastRatePerS: ratePerS,
  };
  const ctx: DetectContext = {
    obs: { atNs: 0n, windowMs: WINDOW_S * 1000, fastWindowMs: 60_000, pools: [pool], priorities: [] },
    state: createEmptyState(),
    slo,
    control,
    tuning: DEFAULT_TUNING,
    windowLabel: '5m',
    fastWindowLabel: '1m',
    suspects: new Set(),
    handled: new Set(),
  };
  const s: ScaleInputs = {
    pool,
    replicas,
    ratePerS,
    floor: 1,
    ceiling,
    learning: learned(),
    util: { value: null, basis: 'none', capacityKnown: false },
    load: { queueShare: null, contention: null, loadBound: false },
    sloMs: slo.ttft_ms ?? null,
    e2eSloMs: slo.e2e_ms ?? null,
    costPerReplicaHour: 4,
    failing: false,
  };
  return { ctx, s };
}

function judge(ctx: DetectContext, s: ScaleInputs) {
  const plan = planPoolSize(ctx, s, s.floor, s.ceiling)!;
  return { plan, candidate: judgeScaleUpByModel(ctx, s, plan) };
}

const requests = fc.array(
  fc.record({
    gapMs: fc.integer({ min: 1, max: 600 }),
    tokens: fc.integer({ min: 1, max: 6000 }),
    decodeMs: fc.integer({ min: 0, max: 8000 }),
  }),
  { minLength: 25, maxLength: 200 },
);
const slos = fc.oneof(
  fc.constant({ ttft_ms: 1000 }),
  fc.record({ ttft_ms: fc.constant(1000), e2e_ms: fc.integer({ min: 1000, max: 9000 }) }),
);

describe('judgeScaleUpByModel', () => {
  it('proposes a scale-up only where the model predicts more requests within the SLO on the added replicas', () => {
    fc.assert(
      fc.property(
        requests,
        fc.integer({ min: 1, max: 4 }),
        slos,
        fc.double({ min: 1, max: 3, noNaN: true }),
        (reqs, n, slo, rise) => {
          const { ctx, s } = setting(servedOn(n, reqs), n, slo, rise);
          const { plan, candidate } = judge(ctx, s);
          const f = plan.loadFactor;
          const share = (k: number) => plan.model.predict(k, f).withinSloShare;
          if (share(s.ceiling) <= share(n)) expect(candidate).toBeNull();
          if (!candidate) return;
          const to = candidate.action.to as number;
          expect(candidate.direction).toBe('increase');
          expect(to).toBeGreaterThan(n);
          expect(share(to)).toBeGreaterThan(share(n));
          // Never past what reaches the requirement: one replica fewer falls short of it, or adds
          // nothing to what the count reaches.
          const required = plan.sizing.required;
          if (to - 1 > n) expect(share(to - 1) < required || share(to - 1) < share(to)).toBe(true);
          expect(to).toBeLessThanOrEqual(plan.sizing.surely);
          // What verification reads: the predicted within-SLO share on the count asked for.
          const impact = candidate.expectedImpact.withinSloShare as { from: number; to: number };
          expect(impact.to).toBeCloseTo(share(to), 3);
          expect(impact.from).toBeCloseTo(share(n), 3);
          expect(candidate.confidence).toBeGreaterThan(0.5);
          expect(candidate.confidence).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('asks for at least as many replicas as the load rises', () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 4 }), slos, (reqs, n, slo) => {
        const arrivals = servedOn(n, reqs);
        const at = (rise: number) => {
          const { ctx, s } = setting(arrivals, n, slo, rise);
          const { plan, candidate } = judge(ctx, s);
          const to = (candidate?.action.to as number | undefined) ?? n;
          return {
            to,
            reaches: plan.model.predict(to, plan.loadFactor).withinSloShare >= plan.sizing.required,
          };
        };
        const low = at(1.2);
        const high = at(1.8);
        // While the requirement is within reach at the higher load (past it, the count where more
        // replicas stop adding requests within the SLO can be lower).
        if (high.reaches) expect(high.to).toBeGreaterThanOrEqual(low.to);
      }),
      { numRuns: 150 },
    );
  });

  it('drains a queue that breaks the TTFT SLO, and buys nothing where the e2e SLO is out of reach', () => {
    // 2,000-token prompts (400 ms of prefill) every 100 ms on two replicas: four replicas' worth.
    const queueing = Array.from({ length: 600 }, () => ({ gapMs: 100, tokens: 2000, decodeMs: 30_000 }));
    const ttftOnly = setting(servedOn(2, queueing), 2, { ttft_ms: 1000 });
    const up = judge(ttftOnly.ctx, ttftOnly.s).candidate;
    expect(up?.action.to).toBeGreaterThanOrEqual(4);
    expect(up?.reason).toContain('pool model');
    // The same requests each decode for 30 s against a 20 s e2e SLO: no replica count brings one
    // within it, so no replica is bought.
    const e2eBound = setting(servedOn(2, queueing), 2, { ttft_ms: 1000, e2e_ms: 20_000 });
    expect(judge(e2eBound.ctx, e2eBound.s).candidate).toBeNull();
  });

  it('buys nothing for sessions that a request no replica count speeds up keeps out of the SLO', () => {
    // Sessions of eight steps queueing on two replicas; each session's last step decodes for 30 s
    // against a 20 s e2e SLO. More replicas would bring most requests within the SLO, no session.
    const reqs = Array.from({ length: 600 }, (_, i) => ({
      gapMs: 100,
      tokens: 2000,
      decodeMs: i % 8 === 7 ? 30_000 : 1000,
    }));
    const sessions = servedOn(2, reqs).map((a, i) => ({ ...a, task: i - (i % 8) }));
    const { ctx, s } = setting(sessions, 2, { ttft_ms: 1000, e2e_ms: 20_000 });
    const { plan, candidate } = judge(ctx, s);
    expect(plan.model.predict(8, plan.loadFactor).withinSloShare).toBeGreaterThan(
      plan.sizing.before.withinSloShare,
    );
    expect(candidate).toBeNull();
    // The same requests as single-request tasks are worth the replicas.
    const single = setting(servedOn(2, reqs), 2, { ttft_ms: 1000, e2e_ms: 20_000 });
    expect(judge(single.ctx, single.s).candidate?.action.to).toBeGreaterThan(2);
  });

  it('leaves the call to the old rules where the model lacks its inputs', () => {
    const reqs = Array.from({ length: 100 }, () => ({ gapMs: 100, tokens: 2000 }));
    const noSlo = setting(servedOn(2, reqs), 2, {});
    expect(planPoolSize(noSlo.ctx, noSlo.s, 1, 16)).toBeNull();
    const unlearned = setting(servedOn(2, reqs), 2, { ttft_ms: 1000 });
    unlearned.s.learning = { ...learned(), healthySamples: 0 };
    expect(planPoolSize(unlearned.ctx, unlearned.s, 1, 16)).toBeNull();
    const few = setting(servedOn(2, reqs.slice(0, DEFAULT_TUNING.minRequests - 1)), 2, { ttft_ms: 1000 });
    expect(planPoolSize(few.ctx, few.s, 1, 16)).toBeNull();
  });
});
