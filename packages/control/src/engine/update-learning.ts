import {
  isDark,
  isQueueNegligible,
  readEngineSlowdown,
  readJudgeableWork,
  readLoad,
  readSpeed,
  MIN_P95_SAMPLE,
} from '../detectors/pool-signals.ts';
import { decayWeight } from '../model/forgetting.ts';
import type { FleetObservation } from '../observe-fleet.ts';
import type { ControlState, PoolLearning } from './control-types.ts';
import { type ControlTuning, boundShare, engineFitMemoryWindows } from './control-tuning.ts';
import { addEngineWindow } from './fit-engine-time.ts';

// What the loop learns from each pool's own history, after a tick's decisions:
// - the engine time a request usually takes when the pool is healthy (to tell a slow GPU from load),
// - the request rate one replica sustains when the pool is saturated (its capacity),
// - how long its engines take for the work they do (runtime counters), to catch a slow GPU at once,
// - how many ticks in a row the pool has been an outlier against its peers.

/**
 * Half-life of the learned capacities (peak, saturated and calm requests/s per replica): what a pool
 * carried fades unless it carries it again. A pool's capacity changes at a deploy (engine, model,
 * batch settings) or a hardware fault — hours apart, not minutes — and a rising load re-teaches it on
 * the way up, so fading over hours costs little and keeps a capacity from before such a change from
 * standing forever. Within one control window (minutes) it fades by well under 1 %.
 */
export const CAPACITY_HALF_LIFE_S = 6 * 3600;

/** The learned capacities decayed to `atNs` (model/forgetting.ts: decaying maxima). */
export function fadeLearnedCapacities(learning: PoolLearning, atNs: bigint): void {
  const since = learning.capacitiesAtNs;
  learning.capacitiesAtNs = since === null || atNs > since ? atNs : since;
  if (since === null || atNs <= since) return;
  const w = decayWeight(atNs - since, CAPACITY_HALF_LIFE_S);
  if (learning.peakRatePerReplica !== null) learning.peakRatePerReplica *= w;
  if (learning.saturatedRatePerReplica !== null) learning.saturatedRatePerReplica *= w;
  if (learning.calmRatePerReplica !== null) learning.calmRatePerReplica *= w;
}

export function updateLearning(
  state: ControlState,
  obs: FleetObservation,
  suspects: ReadonlySet<string>,
  tuning: ControlTuning,
  sloMs: number | null,
  /** errorBudget(control): a window failing more than this is not learned from as healthy. */
  budget: number,
): void {
  for (const pool of obs.pools) {
    const learning: PoolLearning = state.learning.get(pool.pool) ?? {
      peakRatePerReplica: null,
      saturatedRatePerReplica: null,
      calmRatePerReplica: null,
      calmGoodput: null,
      speedBaseline: null,
      loadBaselinePerReplicaPerS: null,
      prefillFloorMsPerToken: null,
      fastestPrefillFloorMsPerToken: null,
      engineFit: null,
      engineSlowAtNs: null,
      darkAtNs: null,
      healthySamples: 0,
      outlierStreak: 0,
      capacitiesAtNs: null,
    };
    fadeLearnedCapacities(learning, obs.atNs);
    learning.outlierStreak = suspects.has(pool.pool) ? learning.outlierStreak + 1 : 0;
    if (isDark(obs, pool)) learning.darkAtNs = obs.atNs;
    const g = pool.fast;
    // The engines' time for their work, from the runtime counters: needs busy engines, not requests.
    const work = readJudgeableWork(pool, obs.fastWindowMs, tuning);
    if (
      suspects.has(pool.pool) &&
      (readEngineSlowdown(learning, pool, obs.fastWindowMs, tuning) ?? 0) >= tuning.slowRatio
    )
      learning.engineSlowAtNs = obs.atNs;
    if (work && !suspects.has(pool.pool) && (g?.errorRate ?? 0) <= budget) {
      learning.engineFit = addEngineWindow(learning.engineFit, work, engineFitMemoryWindows(tuning));
    }
    if (!g || g.requests < MIN_P95_SAMPLE || suspects.has(pool.pool)) {
      state.learning.set(pool.pool, learning);
      continue;
    }
    const healthy = (g.errorRate ?? 0) <= budget;
    const speed = readSpeed(pool);
    const serving = pool.readyReplicas ?? pool.replicas;
    const perReplica = serving && serving > 0 ? pool.fastRatePerS / serving : null;
    // Not an outlier this tick: whatever moved its engine time (load, prompt mix) moved its peers'
    // too, so the baseline follows. An outlier's slowdown is never learned as normal.
    const load = readLoad(pool, learning, tuning);
    const prefill = pool.prefillMsPerToken;
    if (healthy && prefill !== null && (load.contention === null || load.contention < tuning.usualRatio)) {
      const floor = learning.prefillFloorMsPerToken;
      learning.prefillFloorMsPerToken =
        floor === null || prefill < floor ? prefill : floor + 0.05 * (prefill - floor);
    }
    const fastest = pool.fastestPrefillMsPerToken;
    if (healthy && fastest !== null) {
      // The fastest requests ran with the least contention whatever the load, so no load gate here.
      const floor = learning.fastestPrefillFloorMsPerToken;
      learning.fastestPrefillFloorMsPerToken =
        floor === null || fastest < floor ? fastest : floor + 0.05 * (fastest - floor);
    }
    if (healthy && speed !== null) {
      const base = learning.speedBaseline;
      learning.speedBaseline = base === null ? speed : base + tuning.learningRate * (speed - base);
      if (perReplica !== null) {
        const base = learning.loadBaselinePerReplicaPerS;
        learning.loadBaselinePerReplicaPerS =
          base === null ? perReplica : base + tuning.learningRate * (perReplica - base);
      }
      learning.healthySamples += 1;
    }
    if (perReplica !== null && healthy) {
      if (perReplica > (learning.peakRatePerReplica ?? 0)) learning.peakRatePerReplica = perReplica;
      // Sustained saturation: the median request waited a good part of its TTFT for admission.
      const q50 = g.queueMs.p50;
      const t50 = g.ttftMs.p50;
      const queued = q50 !== null && t50 !== null && t50 > 0 && q50 / t50 >= boundShare(tuning) / 2;
      // With chunked prefill a loaded engine admits at once and each prompt token takes longer instead
      // — but only load explains it if each replica carries more than it ever did calmly: a prompt mix
      // that swings to long prompts stretches prefill per token at a light load too.
      const contended =
        (load.contention ?? 0) >= tuning.slowRatio &&
        learning.calmRatePerReplica !== null &&
        perReplica > learning.calmRatePerReplica;
      // Sustained: a short window right after the pool was held up also completes the backlog, more
      // than the engines carry for long; the control window's rate does not count that twice.
      const sustained = Math.min(perReplica, pool.mainRatePerS / (serving ?? 1));
      if ((queued || contended) && sustained > (learning.saturatedRatePerReplica ?? 0))
        learning.saturatedRatePerReplica = sustained;
      const calm =
        !load.loadBound && isQueueNegligible(g, sloMs, budget) && (load.contention ?? 1) < tuning.usualRatio;
      if (calm && perReplica > (learning.calmRatePerReplica ?? 0)) learning.calmRatePerReplica = perReplica;
      if (calm && g.goodput !== null) {
        const base = learning.calmGoodput;
        learning.calmGoodput = base === null ? g.goodput : base + tuning.learningRate * (g.goodput - base);
      }
    }
    state.learning.set(pool.pool, learning);
  }
}
