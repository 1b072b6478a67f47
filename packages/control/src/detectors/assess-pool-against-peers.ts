import { trustedAfterSamples } from '../engine/control-tuning.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, evidence, isCircuitOpen } from './detect-context.ts';
import {
  MIN_JUDGED_SAMPLE,
  readEngineSlowdown,
  readFaultRate,
  readSpeed,
  round,
  summarizeScope,
  MIN_P95_SAMPLE,
} from './pool-signals.ts';
import type { Evidence, SignalGroup } from '@governor/conventions';
import { faultTest } from '../health/pool-health.ts';
import type { ControlTuning } from '../engine/control-tuning.ts';
import { errorBudget } from '../objective/operating-bounds.ts';

// One pool's errors and speed against its peers serving the same model: the assessment the outlier
// detector, traffic recovery and verification read, and how it reads as evidence and a reason.

export interface PoolAssessment {
  pool: PoolView;
  requests: number;
  /** Its fault rate (readFaultRate: errors less timeouts and rejections), and its peers'. */
  errorRate: number | null;
  peerErrorRate: number | null;
  errorOutlier: boolean;
  /** Significance of its faults being above its peers' (faultTest), 0 when not judged. */
  faultConfidence: number;
  /** That test's z score, 0 when not judged. */
  faultZ: number;
  slowdown: number | null;
  peerSlowdown: number | null;
  /** Load per replica now over the load while the baseline was learned. */
  loadRatio: number | null;
  latencyOutlier: boolean;
  /** Prefill of its fastest requests vs their healthy floor, and the median peer's (1 = as usual). */
  fastestSlowdown: number | null;
  peerFastestSlowdown: number | null;
  /** Slow even at its fastest requests while its peers' run as usual: the GPU, not the load. */
  slowAtFastest: boolean;
  /** Its engines' busy time over what their work took while healthy, and the median peer's (1 = as usual). */
  engineSlowdown: number | null;
  peerEngineSlowdown: number | null;
  /** Its engines take far longer for their work than usual while its peers' do not: the GPU. */
  slowEngine: boolean;
  /** Its engines read normal again after a slowdown: its slow spans are requests from before. */
  engineRecovered: boolean;
}

export function assessPoolAgainstPeers(
  ctx: DetectContext,
  pool: PoolView,
  servingModel: PoolView[],
): PoolAssessment {
  const { tuning } = ctx;
  const minSample = MIN_JUDGED_SAMPLE;
  const g = pool.fast;
  const requests = g?.requests ?? 0;
  const peers = servingModel.filter(
    (p) => p.pool !== pool.pool && !isCircuitOpen(ctx, p.pool) && (p.fast?.requests ?? 0) >= minSample,
  );
  const result: PoolAssessment = {
    pool,
    requests,
    // Faults only: a pool's own timeouts and rejections are its capacity, judged by the scale policy.
    errorRate: readFaultRate(g),
    peerErrorRate: null,
    errorOutlier: false,
    faultConfidence: 0,
    faultZ: 0,
    slowdown: null,
    peerSlowdown: null,
    loadRatio: null,
    latencyOutlier: false,
    fastestSlowdown: null,
    peerFastestSlowdown: null,
    slowAtFastest: false,
    engineSlowdown: null,
    peerEngineSlowdown: null,
    slowEngine: false,
    engineRecovered: false,
  };
  // The runtime counters show what the engines did in the window itself, with or without requests
  // ending in it: long requests report a slow GPU on their spans only when they end.
  result.engineSlowdown = readEngineSlowdown(
    ctx.state.learning.get(pool.pool),
    pool,
    ctx.obs.fastWindowMs,
    tuning,
  );
  const peerEngine = servingModel
    .filter((p) => p.pool !== pool.pool && !isCircuitOpen(ctx, p.pool))
    .map((p) => readEngineSlowdown(ctx.state.learning.get(p.pool), p, ctx.obs.fastWindowMs, tuning))
    .filter((v): v is number => v !== null)
    .sort((a, b) => a - b);
  if (result.engineSlowdown !== null && peerEngine.length > 0) {
    result.peerEngineSlowdown = peerEngine[Math.floor((peerEngine.length - 1) / 2)]!;
    result.slowEngine = slowBeyondPeers(tuning, result.engineSlowdown, peerEngine);
  }
  if (!g || requests < minSample || peers.length === 0) {
    result.latencyOutlier = result.slowEngine;
    return result;
  }

  result.peerErrorRate = summarizeScope(peers, 'fast').faultRate ?? null;
  if (result.errorRate !== null && result.peerErrorRate !== null) {
    // Faults against the peers' share, as a two-proportion test on the requests actually seen (a
    // sampled group's count is scaled up; its evidence is what was stored): significant at the
    // evidence level, and more than the error budget beyond the peers' share — fewer would not keep
    // the model from its attainment target, so moving traffic over them buys nothing.
    const mine = observed(g);
    const theirs = peers.map((p) => ({ n: observed(p.fast), rate: readFaultRate(p.fast) }));
    const peerN = theirs.reduce((s, t) => s + (t.rate === null ? 0 : t.n), 0);
    const peerFaults = theirs.reduce((s, t) => s + (t.rate === null ? 0 : t.rate * t.n), 0);
    const test = faultTest(result.errorRate * mine, mine, peerFaults, peerN);
    result.faultConfidence = test.confidence;
    result.faultZ = test.z;
    result.errorOutlier = test.confidence >= tuning.evidenceLevel && test.excess >= errorBudget(ctx.control);
  }

  result.slowdown = readSlowdown(ctx, pool);
  const peerSlowdowns = peers.map((p) => readSlowdown(ctx, p)).filter((v): v is number => v !== null);
  if (peerSlowdowns.length > 0) {
    peerSlowdowns.sort((a, b) => a - b);
    result.peerSlowdown = peerSlowdowns[Math.floor((peerSlowdowns.length - 1) / 2)]!;
    result.loadRatio = readLoadRatio(ctx, pool);
    result.latencyOutlier =
      slowBeyondPeers(tuning, result.slowdown, peerSlowdowns) &&
      (result.loadRatio === null || result.loadRatio <= tuning.usualRatio);
  }
  // Work-normalized: load and prompt mix change the work, not the time per unit of it.
  if (result.slowEngine) result.latencyOutlier = true;
  // The counters say how the engines run now; spans say how they ran for requests that started up to
  // minutes ago. Once the counters saw a slow GPU recover, slow spans still ending within a control
  // window are its tail, not a new slowdown.
  const slowAt = ctx.state.learning.get(pool.pool)?.engineSlowAtNs ?? null;
  const recovered =
    result.engineSlowdown !== null &&
    !result.slowEngine &&
    slowAt !== null &&
    ctx.obs.atNs - slowAt <= BigInt(ctx.obs.windowMs) * 1_000_000n;
  result.engineRecovered = recovered;
  if (recovered) result.latencyOutlier = false;
  // Load slows the typical request; a slow GPU slows even the fastest ones. A burst on every pool
  // hides a slow one among them, but not from this.
  result.fastestSlowdown = readFastestSlowdown(ctx, pool);
  const peerFastest = peers.map((p) => readFastestSlowdown(ctx, p)).filter((v): v is number => v !== null);
  if (result.fastestSlowdown !== null && peerFastest.length > 0) {
    peerFastest.sort((a, b) => a - b);
    result.peerFastestSlowdown = peerFastest[Math.floor((peerFastest.length - 1) / 2)]!;
    result.slowAtFastest = slowBeyondPeers(tuning, result.fastestSlowdown, peerFastest) && !recovered;
  }
  return result;
}

/**
 * Slow enough to matter — at least slowRatio × its own healthy speed — while the median
 * peer runs as usual (at most usualRatio ×), so the pool is at least slowRatio ÷ usualRatio slower
 * than it: a slowdown its peers share is load or prompt mix, not the pool. Still ratios, not a test like the faults': a test needs the
 * measured spread of healthy engines around their fits, which the control state does not keep yet.
 */
function slowBeyondPeers(tuning: ControlTuning, mine: number | null, peers: readonly number[]): boolean {
  if (mine === null || peers.length === 0) return false;
  const median = [...peers].sort((a, b) => a - b)[Math.floor((peers.length - 1) / 2)]!;
  return mine >= tuning.slowRatio && median <= tuning.usualRatio;
}

/** Prefill ms per token of the pool's fastest requests over their healthy floor; null until learned. */
function readFastestSlowdown(ctx: DetectContext, pool: PoolView): number | null {
  const learning = ctx.state.learning.get(pool.pool);
  const floor = learning?.fastestPrefillFloorMsPerToken;
  const now = pool.fastestPrefillMsPerToken;
  if (!learning || learning.healthySamples < trustedAfterSamples(ctx.tuning)) return null;
  if (!floor || floor <= 0 || now === null) return null;
  return now / floor;
}

/** How much slower than usual the pool works: by its engines' counters when they show it, else its requests. */
export function readSlowness(a: PoolAssessment): number {
  if (a.slowEngine) return a.engineSlowdown ?? 1;
  return a.engineRecovered ? 1 : (a.slowdown ?? 1);
}

/** Engine time now over the pool's own healthy baseline (1 = as usual); null without a trusted baseline. */
export function readSlowdown(ctx: DetectContext, pool: PoolView): number | null {
  const learning = ctx.state.learning.get(pool.pool);
  const baseline = learning?.speedBaseline;
  const now = readSpeed(pool);
  if (!learning || learning.healthySamples < trustedAfterSamples(ctx.tuning)) return null;
  if (!baseline || baseline <= 0 || now === null || (pool.fast?.requests ?? 0) < 5) return null;
  return now / baseline;
}

/** Requests/s per serving replica now over what it was while the baseline was learned. */
function readLoadRatio(ctx: DetectContext, pool: PoolView): number | null {
  const base = ctx.state.learning.get(pool.pool)?.loadBaselinePerReplicaPerS;
  const serving = pool.readyReplicas ?? pool.replicas;
  if (!base || base <= 0 || !serving) return null;
  return pool.fastRatePerS / serving / base;
}

/** The signals a pool was judged on against its peers, as recommendation evidence. */
export function describeEvidence(ctx: DetectContext, a: PoolAssessment): Evidence[] {
  const { tuning, fastWindowLabel: w } = ctx;
  const pool = a.pool.pool;
  return [
    evidence(
      `faultRate{pool=${pool}}`,
      a.errorRate,
      a.peerErrorRate === null ? null : a.peerErrorRate + errorBudget(ctx.control),
      w,
    ),
    evidence(`faultTestConfidence{pool=${pool}}`, a.faultConfidence, tuning.evidenceLevel, w),
    evidence(`faultRate{peers of ${pool}}`, a.peerErrorRate, null, w),
    evidence(`engineTimeVsBaseline{pool=${pool}}`, a.slowdown, tuning.slowRatio, w),
    evidence(`engineTimeVsBaseline{peers of ${pool}}`, a.peerSlowdown, tuning.usualRatio, w),
    evidence(`fastestPrefillVsFloor{pool=${pool}}`, a.fastestSlowdown, tuning.slowRatio, w),
    evidence(`fastestPrefillVsFloor{peers of ${pool}}`, a.peerFastestSlowdown, tuning.usualRatio, w),
    evidence(`engineBusyVsWork{pool=${pool}}`, a.engineSlowdown, tuning.slowRatio, w),
    evidence(`engineBusyVsWork{peers of ${pool}}`, a.peerEngineSlowdown, tuning.usualRatio, w),
    evidence(`loadPerReplicaVsBaseline{pool=${pool}}`, a.loadRatio, tuning.usualRatio, w),
    evidence(`requests{pool=${pool}}`, a.requests, MIN_P95_SAMPLE, w),
  ];
}

export function severity(a: PoolAssessment): number {
  return (a.errorOutlier ? (a.errorRate ?? 0) * 10 : 0) + (a.latencyOutlier ? readSlowness(a) : 0);
}

export function describe(a: PoolAssessment): string {
  const parts: string[] = [];
  if (a.errorOutlier) {
    parts.push(
      `${pct(a.errorRate)} of its requests fail (timeouts and rejections aside) vs ${pct(a.peerErrorRate)} on its peers`,
    );
  }
  if (a.slowEngine) {
    parts.push(
      `its engines take ${round(a.engineSlowdown ?? 0, 1)}× their usual time for the work they do while its peers' take ${round(a.peerEngineSlowdown ?? 1, 1)}×`,
    );
  } else if (a.latencyOutlier) {
    parts.push(
      `requests take ${round(a.slowdown ?? 0, 1)}× their usual engine time while peers run at ${round(a.peerSlowdown ?? 1, 1)}×`,
    );
  }
  return parts.join('; ');
}

function pct(v: number | null): string {
  return v === null ? 'n/a' : `${round(v * 100, 1)}%`;
}

/** Requests a group's rates were measured on: its count, less what sampling scaled it up by. */
function observed(g: SignalGroup | null): number {
  if (!g) return 0;
  return g.sampled && g.samplingRatio ? g.requests * g.samplingRatio : g.requests;
}
