import { boundShare, engineMinBusyMs, trustedAfterSamples } from '../engine/control-tuning.ts';
import { binomialUpperTail } from '../health/pool-health.ts';
import type { SignalGroup } from '@governor/conventions';
import type { PoolLearning, ScopeMetrics } from '../engine/control-types.ts';
import type { ControlTuning } from '../engine/control-tuning.ts';
import { ENGINE_FIT_MIN_WINDOWS, predictBusyMs } from '../engine/fit-engine-time.ts';
import type { EngineWork } from '@governor/signals';
import type { FleetObservation, PoolView } from '../observe-fleet.ts';

// Readings every policy shares: how much of TTFT is queueing, how busy a pool is, how a scope is doing.

/**
 * Requests a pool needs in a window before its signals are judged: the SLO and every latency the
 * loop reads are p95s, and a p95 says more than "the slowest request" only once one request in
 * 1 ÷ (1 − 0.95) = 20 lies above it. A fact of the statistic, not a setting.
 */
export const MIN_P95_SAMPLE = Math.round(1 / (1 - 0.95));

/**
 * Share of TTFT spent queueing (0–1): the larger of the queue hop's mean share of TTFT and p95 queue
 * time over p95 TTFT — a queue that only the slow tail meets still makes the tail queue-bound.
 */
export function readQueueShare(g: SignalGroup | null): number | null {
  if (!g) return null;
  const hops = g.hops as Record<string, { shareOfTtft?: number | null } | undefined>;
  const hopShare = hops.queue?.shareOfTtft ?? hops.scheduler?.shareOfTtft ?? null;
  const q = g.queueMs.p95;
  const t = g.ttftMs.p95;
  const tailShare = q !== null && t !== null && t > 0 ? Math.min(1, q / t) : null;
  const shares = [hopShare, tailShare].filter((v): v is number => v !== null && Number.isFinite(v));
  return shares.length > 0 ? Math.max(...shares) : null;
}

export interface LoadReading {
  queueShare: number | null;
  /** Prefill ms per prompt token over the pool's uncontended floor (1 = idle speed); null before it is learned. */
  contention: number | null;
  /**
   * TTFT is stretched by load: requests queue for admission, or — with chunked prefill, where a
   * loaded vLLM admits at once and prefills share the batch's token budget — each prompt token takes
   * well longer to prefill than on the idle pool.
   */
  loadBound: boolean;
}

/** A pool's prefill ms per prompt token when uncontended, once a few healthy ticks taught it. */
export function readUncontendedMsPerToken(
  learning: PoolLearning | undefined,
  tuning: ControlTuning,
): number | null {
  return learning && learning.healthySamples >= trustedAfterSamples(tuning)
    ? learning.prefillFloorMsPerToken
    : null;
}

export function readLoad(
  pool: PoolView,
  learning: PoolLearning | undefined,
  tuning: ControlTuning,
): LoadReading {
  const queueShare = readQueueShare(pool.fast);
  const floor = readUncontendedMsPerToken(learning, tuning);
  const now = pool.prefillMsPerToken;
  const contention = now !== null && floor !== null && floor > 0 ? now / floor : null;
  const loadBound = (queueShare ?? 0) >= boundShare(tuning) || (contention ?? 0) >= tuning.slowRatio;
  return { queueShare, contention, loadBound };
}

/** How fast the engine works: prefill ms per prompt token, else e2e p50 − queue p50 (lower is faster). */
export function readSpeed(pool: PoolView): number | null {
  return pool.prefillMsPerToken ?? readServiceMs(pool.fast);
}

/**
 * Queueing is negligible: the median request does not queue (p50 queue within `share` of p50 TTFT),
 * or even the p95 queue time is within `share` of the SLO.
 */
export function isQueueNegligible(g: SignalGroup | null, sloMs: number | null, share: number): boolean {
  if (!g) return true;
  const q95 = g.queueMs.p95;
  const q50 = g.queueMs.p50;
  const t50 = g.ttftMs.p50;
  if (q95 === null) return true;
  if (sloMs !== null && q95 <= share * sloMs) return true;
  return q50 !== null && t50 !== null && t50 > 0 && q50 <= share * t50;
}

/** Share of TTFT spent in prefill (0–1): the prefill hop's mean share, or its p95 over TTFT p95. */
export function readPrefillShare(g: SignalGroup | null): number | null {
  if (!g) return null;
  const hopShare = g.hops.prefill?.shareOfTtft ?? null;
  const p = g.hops.prefill?.p95 ?? null;
  const t = g.ttftMs.p95;
  const tailShare = p !== null && t !== null && t > 0 ? Math.min(1, p / t) : null;
  const shares = [hopShare, tailShare].filter((v): v is number => v !== null && Number.isFinite(v));
  return shares.length > 0 ? Math.max(...shares) : null;
}

/** Time a request spends in the engine (e2e p50 − queue p50): what a slow GPU stretches. */
export function readServiceMs(g: SignalGroup | null): number | null {
  if (!g || g.e2eMs.p50 === null) return null;
  return Math.max(0, g.e2eMs.p50 - (g.queueMs.p50 ?? 0));
}

export interface Utilization {
  /** Load as a share of what the pool sustains (1 = saturated); null when nothing tells. */
  value: number | null;
  basis: 'learned_capacity' | 'compute_util' | 'kv_cache' | 'none';
  /**
   * True when a throughput capacity (learned at saturation, or a configured peak) backs the value.
   * KV usage alone only bounds memory: a half-empty KV cache says nothing about compute headroom.
   */
  capacityKnown: boolean;
}

/**
 * How loaded a pool is at `ratePerS` with `replicas`: the largest of (a) rate over the capacity
 * learned once the pool was saturated, (b) compute_util when the config gives the pool's
 * peak tokens/s (a learned peak is only the best the pool has done so far, so it says "busy" for any
 * pool that was never pushed), (c) KV-cache usage (full at 1). A lower-bound capacity
 * (never saturated) is not used for the same reason.
 */
export function estimateUtilization(
  pool: PoolView,
  ratePerS: number,
  replicas: number,
  learning: PoolLearning | undefined,
): Utilization {
  let best: Utilization = { value: null, basis: 'none', capacityKnown: false };
  let capacityKnown = false;
  const consider = (value: number | null, basis: Utilization['basis']) => {
    if (value === null || !Number.isFinite(value)) return;
    if (basis !== 'kv_cache') capacityKnown = true;
    if (best.value === null || value > best.value) best = { value, basis, capacityKnown: false };
  };
  const learned = learnedCapacity(learning, 'peak');
  if (learned && learned > 0 && replicas > 0) consider(ratePerS / (replicas * learned), 'learned_capacity');
  const observedReplicas = pool.replicas ?? replicas;
  const scale = observedReplicas > 0 && replicas > 0 ? observedReplicas / replicas : 1;
  const g = pool.fast && pool.fast.requests > 0 ? pool.fast : pool.main;
  if (pool.peakConfigured && g?.computeUtil !== null && g?.computeUtil !== undefined) {
    consider(g.computeUtil * scale, 'compute_util');
  }
  if (g?.memoryUtil !== null && g?.memoryUtil !== undefined) {
    // vLLM's KV usage is the share of the cache's blocks in use: full at 1.
    consider(g.memoryUtil * scale, 'kv_cache');
  }
  return { ...best, capacityKnown };
}

/** A pool's utilization at its current load on its current replicas; null without replicas or a basis. */
export function readUtilizationNow(pool: PoolView, learning: PoolLearning | undefined): number | null {
  const replicas = pool.replicas ?? 0;
  if (replicas <= 0) return null;
  return estimateUtilization(pool, Math.max(pool.fastRatePerS, pool.mainRatePerS), replicas, learning).value;
}

/**
 * Requests/s one replica sustains, once the pool has been saturated. 'peak' is the most it ever
 * completed per replica: what scaling sizes to (a scale-up that falls short gets another step at the
 * next tick; a scale-in waits for a calm pool and is verified). 'saturated' is the most it completed,
 * over the control window, while saturated: the cautious estimate, for moving an incident's traffic
 * onto a peer at once — a burst of short prompts completes more per replica than the usual mix can.
 */
export function learnedCapacity(
  learning: PoolLearning | undefined,
  which: 'peak' | 'saturated',
): number | null {
  const saturated = learning?.saturatedRatePerReplica ?? null;
  const peak = learning?.peakRatePerReplica ?? null;
  if (saturated === null || peak === null) return null;
  return which === 'peak' ? peak : Math.min(saturated, peak);
}

/** Request-weighted health of a set of pools over one window. */
/**
 * The share of a group's requests that failed for reasons other than load: errors less timeouts and
 * rejections, which a pool short of capacity produces by itself (its backlog outlasts its clients'
 * deadlines). Those say "add capacity"; these say "something is wrong with the pool".
 */
export function readFaultRate(g: SignalGroup | null): number | null {
  if (!g || g.errorRate === null) return null;
  return Math.max(0, g.errorRate - (g.overloadRate ?? 0));
}

export function summarizeScope(pools: readonly PoolView[], which: 'main' | 'fast'): ScopeMetrics {
  const groups = pools
    .map((p) => (which === 'main' ? p.main : p.fast))
    .filter((g): g is SignalGroup => g !== null);
  const requests = groups.reduce((sum, g) => sum + g.requests, 0);
  const weighted = (pick: (g: SignalGroup) => number | null) => {
    let sum = 0;
    let weight = 0;
    for (const g of groups) {
      const v = pick(g);
      if (v === null || !Number.isFinite(v) || g.requests <= 0) continue;
      sum += v * g.requests;
      weight += g.requests;
    }
    return weight > 0 ? sum / weight : null;
  };
  const max = (pick: (g: SignalGroup) => number | null) => {
    let out: number | null = null;
    for (const g of groups) {
      const v = pick(g);
      if (v !== null && Number.isFinite(v) && g.requests > 0) out = out === null ? v : Math.max(out, v);
    }
    return out;
  };
  const costs = groups.map((g) => g.costUsd).filter((c): c is number => c !== null);
  const costUsd = costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null;
  const successful = groups.reduce((sum, g) => sum + g.successfulTasks, 0);
  return {
    requests,
    goodput: weighted((g) => g.goodput),
    errorRate: weighted((g) => g.errorRate),
    faultRate: weighted(readFaultRate),
    ttftP95Ms: max((g) => g.ttftMs.p95),
    queueP95Ms: max((g) => g.queueMs.p95),
    costUsd,
    successPerDollar: costUsd !== null && costUsd > 0 ? successful / costUsd : null,
  };
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * Overload has turned into failures: more requests fail than the error budget (errorBudget) allows,
 * surely — a one-sided binomial test of the failures seen against the budget's share, held to
 * evidenceLevel as the fault test is (significance(): a tail of p ≤ (1 − evidenceLevel) ÷ 2). At a
 * few requests a minute, one or two stray errors are noise that neither shedding nor replicas fix.
 */
export function isFailing(
  errorRate: number | null,
  requests: number,
  tuning: ControlTuning,
  budget: number,
): boolean {
  if (errorRate === null || errorRate < budget || !(requests > 0)) return false;
  const failures = Math.round(errorRate * requests);
  return binomialUpperTail(failures, requests, budget) <= (1 - tuning.evidenceLevel) / 2;
}

/**
 * Busy time of a pool's engines over what their healthy fit expects for the work they did (1 = as
 * usual); null until the fit has enough windows, or with too little busy time to judge.
 */
export function readEngineSlowdown(
  learning: PoolLearning | undefined,
  pool: PoolView,
  windowMs: number,
  tuning: ControlTuning,
): number | null {
  const fit = learning?.engineFit;
  if (!fit || fit.samples < ENGINE_FIT_MIN_WINDOWS) return null;
  const work = readJudgeableWork(pool, windowMs, tuning);
  if (!work) return null;
  const expected = predictBusyMs(fit, work);
  return expected === null ? null : work.busyMs / expected;
}

/** The pool's engine work over the short window when its engines were busy enough to tell (engineMinBusyMs). */
export function readJudgeableWork(
  pool: PoolView,
  windowMs: number,
  tuning: ControlTuning,
): EngineWork | null {
  const work = pool.engineWork;
  const replicas = pool.readyReplicas ?? pool.replicas ?? 1;
  return work && work.busyMs >= engineMinBusyMs(tuning, windowMs, replicas) ? work : null;
}

/**
 * Requests a pool needs in the short window to be compared with its peers or its own history: half
 * the p95 sample, since a comparison's test weighs its sample size itself (its standard error) where
 * an estimate on its own cannot.
 */
export const MIN_JUDGED_SAMPLE = MIN_P95_SAMPLE / 2;

/**
 * No replica serving while it has some (none ready, or none reporting while its peers' do): the router
 * sends its share around it. (Fewer replicas serving than it has is different: they still carried its
 * share, so a calm reading then is, if anything, cautious.)
 */
export function isDark(obs: FleetObservation, pool: PoolView): boolean {
  if ((pool.replicas ?? 0) <= 0) return false;
  if (pool.readyReplicas !== null) return pool.readyReplicas === 0;
  return obs.pools.some((p) => p.pool !== pool.pool && p.model === pool.model && p.readyReplicas !== null);
}
