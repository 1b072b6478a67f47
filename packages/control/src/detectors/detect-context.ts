import type { ControlConfig, Evidence, SloConfig } from '@governor/conventions';
import type { ControlState, TargetMemory } from '../engine/control-types.ts';
import type { ControlTuning } from '../engine/control-tuning.ts';
import type { FleetObservation, PoolView } from '../observe-fleet.ts';
import { secondsToNs } from '../time.ts';
import type { RecommendationKind, RecommendationTarget } from '@governor/conventions';
import { memoryKey } from '../engine/memory-key.ts';
import { type LoadWindows, demandDispersion } from '../model/forecast-load.ts';
import { MAX_ARRIVALS_PER_POOL } from '@governor/signals';

/** What every detector reads in one tick. Detectors are pure: they only return candidates. */
export interface DetectContext {
  obs: FleetObservation;
  state: ControlState;
  slo: SloConfig;
  control: ControlConfig;
  tuning: ControlTuning;
  windowLabel: string;
  fastWindowLabel: string;
  /**
   * Pools judged faulty against their peers this tick (findSuspects, before any detector runs): not
   * scaled, not used as failover.
   */
  suspects: ReadonlySet<string>;
}

export function evidence(
  signal: string,
  value: number | null,
  threshold: number | null,
  window: string,
): Evidence {
  const clean = (v: number | null) =>
    v === null || !Number.isFinite(v) ? null : Math.round(v * 1000) / 1000;
  return { signal, value: clean(value), threshold: clean(threshold), window };
}

export function readMemory(
  ctx: DetectContext,
  kind: RecommendationKind,
  target: RecommendationTarget,
): TargetMemory | undefined {
  return ctx.state.memory.get(memoryKey(kind, target));
}

/** Whether a remembered action was applied within the cooldown (the engine bars reversing it). */
export function isWithinCooldown(
  ctx: DetectContext,
  memory: TargetMemory | undefined,
): memory is TargetMemory {
  return memory !== undefined && ctx.obs.atNs - memory.appliedNs <= secondsToNs(ctx.control.cooldown_s);
}

/** Traffic recovery is still to give the pool back the share an incident took from it. */
export function isRecovering(ctx: DetectContext, pool: PoolView): boolean {
  return pool.model !== null && (ctx.state.actuated.recovery[pool.model]?.pools.includes(pool.pool) ?? false);
}

/** Pools serving each model, with a model known. */
export function groupByModel(pools: readonly PoolView[]): Map<string, PoolView[]> {
  const out = new Map<string, PoolView[]>();
  for (const p of pools) {
    if (!p.model) continue;
    const list = out.get(p.model) ?? [];
    list.push(p);
    out.set(p.model, list);
  }
  return out;
}

/** True while a breaker Governor opened on the pool is still open at the tick's time. */
export function isCircuitOpen(ctx: DetectContext, pool: string): boolean {
  const c = ctx.state.actuated.circuits[pool];
  if (!c?.open) return false;
  return c.untilNs === null || c.untilNs > ctx.obs.atNs;
}

/**
 * Routing weights in effect for a model's pools: what Governor last set, else each pool's share of
 * the model's traffic over the control window (the router's weights as observed).
 */
export function readWeights(
  ctx: DetectContext,
  model: string,
  pools: readonly PoolView[],
): Record<string, number> {
  const set = ctx.state.actuated.weights[model];
  if (set) {
    const out: Record<string, number> = {};
    for (const p of pools) out[p.pool] = set[p.pool] ?? 0;
    return out;
  }
  const total = pools.reduce((sum, p) => sum + (p.main?.requests ?? 0), 0);
  const out: Record<string, number> = {};
  for (const p of pools) out[p.pool] = total > 0 ? (p.main?.requests ?? 0) / total : 1 / pools.length;
  return normalizeWeights(out);
}

/**
 * The smallest change of a pool's traffic weight worth an action, and the margin within which a
 * weight counts as back where it was: two points of a model's traffic, below the noise of a weighted
 * router's split over a control window.
 */
export const MIN_WEIGHT_STEP = 0.02;

/**
 * One step of a traffic move that is not an incident's (a cheaper pool taking more, a pool given
 * back its traffic, tasks downgraded or taken back): a quarter of the share in play, so four steps
 * move all of it, each judged on what the last one did.
 */
export const TRAFFIC_STEP = 0.25;

export function normalizeWeights(weights: Record<string, number>): Record<string, number> {
  const total = Object.values(weights).reduce((a, b) => a + Math.max(0, b), 0);
  const keys = Object.keys(weights);
  const out: Record<string, number> = {};
  for (const k of keys)
    out[k] = total > 0 ? Math.round((Math.max(0, weights[k]!) / total) * 1000) / 1000 : 1 / keys.length;
  // Put the rounding remainder on the largest weight so the weights sum to exactly 1.
  const sum = Object.values(out).reduce((a, b) => a + b, 0);
  const largest = keys.reduce((a, b) => (out[b]! > out[a]! ? b : a), keys[0]!);
  if (largest !== undefined) out[largest] = Math.round((out[largest]! + 1 - sum) * 1000) / 1000;
  return out;
}

/**
 * A pool's rates over the control window and the short window, each over the part of it the store's
 * telemetry covers: what its load outlook (model/forecast-load.ts) is read from, the same for sizing
 * it and for giving it more traffic.
 */
export function loadWindowsOf(ctx: DetectContext, pool: PoolView): LoadWindows {
  return {
    mainRatePerS: pool.mainRatePerS,
    mainWindowS: ctx.obs.coveredMs / 1000,
    fastRatePerS: pool.fastRatePerS,
    fastWindowS: Math.min(ctx.obs.fastWindowMs, ctx.obs.coveredMs) / 1000,
    dispersion: poolDispersion(ctx, pool),
  };
}

/**
 * The pool's load dispersion over the telemetry seen, in control intervals: of its demand
 * (model/forecast-load.ts demandDispersion).
 */
function poolDispersion(ctx: DetectContext, pool: PoolView): number {
  const windowMs = ctx.obs.windowMs;
  let coveredMs = Math.min(ctx.obs.coveredMs, windowMs);
  // A busy pool's sample is its latest requests (MAX_ARRIVALS_PER_POOL): it covers from its first.
  const first = pool.arrivals[0]?.arriveMs;
  if (pool.arrivals.length >= MAX_ARRIVALS_PER_POOL && first !== undefined)
    coveredMs = Math.min(coveredMs, windowMs - first);
  return demandDispersion(
    pool.arrivals,
    windowMs,
    coveredMs,
    ctx.control.interval_s * 1000,
    pool.mainRatePerS,
  );
}
