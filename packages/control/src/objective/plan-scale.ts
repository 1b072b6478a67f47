import type { RequestArrival } from '@governor/signals';
import { type LoadForecast, type LoadWindows, loadOutlookPerS } from '../model/forecast-load.ts';
import { createPoolModel, type PoolModel } from '../model/predict-pool.ts';
import { type Sizing, sizePool } from './size-pool.ts';
import type { ReplicaStep } from '../detectors/replay-prefill-queue.ts';

// A pool's size from its model at the load it will carry: its recent requests (the model), the
// load forecast over the horizon the decision must hold for (the forecast), and the objective's
// constraint (the attainment target). The forecast's upper bound (one standard error over) is what
// the pool is sized for: a replica count the model says holds only if the load does not rise as
// fast as it has been rising is not feasible.

/**
 * The pool's load windows (model/forecast-load.ts LoadWindows: requests/s over the control window
 * and the short window ending now, sampling weights applied; the counts' dispersion) and the rest.
 */
export interface ScalePlanInputs extends LoadWindows {
  arrivals: readonly RequestArrival[];
  /** Replicas serving the pool now. */
  replicas: number;
  /** The counts that served the arrivals, when a scale action fell within them (PoolObservation). */
  servedOn?: readonly ReplicaStep[];
  /** Seconds the decision must hold for (until it is verified). */
  horizonS: number;
  /** What a shift planned with the decision multiplies the pool's load by (≥ 1; default 1). */
  shareGain?: number;
  /** Prefill ms per uncached prompt token on an uncontended replica (PoolObservation.msPerToken). */
  msPerToken: number;
  /** Prefix cache hit rate from the runtime's counters (PoolObservation.prefixHitRate). */
  prefixHitRate?: number | null;
  /** TTFT and e2e objectives (ms); null when not configured (one of them must be). */
  sloMs: number | null;
  e2eSloMs: number | null;
  /** Requests that did not fail for reasons other than load. */
  successShare: number;
  /** Mean KV cache usage of its replicas over the control window (0–1); null when not reported. */
  kvUsage: number | null;
  usdPerReplicaHour: number | null;
  attainmentTarget: number;
  floor: number;
  ceiling: number;
}

export interface ScalePlan {
  model: PoolModel;
  sizing: Sizing;
  forecast: LoadForecast;
  /** The load sized for, relative to the control window's. */
  loadFactor: number;
}

export type PoolModelInputs = Pick<
  ScalePlanInputs,
  | 'arrivals'
  | 'replicas'
  | 'servedOn'
  | 'mainRatePerS'
  | 'msPerToken'
  | 'prefixHitRate'
  | 'sloMs'
  | 'e2eSloMs'
  | 'successShare'
  | 'usdPerReplicaHour'
  | 'kvUsage'
>;

/**
 * The pool's model from its recent requests, replayed at the rate the pool really receives (a sample
 * of head-sampled or capped traces is packed closer); null when there is nothing to model (no
 * requests, no SLO, no rate).
 */
export function modelPool(i: PoolModelInputs): PoolModel | null {
  const sampleRate = arrivalRatePerS(i.arrivals);
  if (sampleRate === null || i.mainRatePerS <= 0) return null;
  return createPoolModel({
    arrivals: i.arrivals,
    replicas: i.replicas,
    ...(i.servedOn ? { servedOn: i.servedOn } : {}),
    sampleScale: Math.max(1, i.mainRatePerS / sampleRate),
    ratePerS: i.mainRatePerS,
    msPerToken: i.msPerToken,
    prefixHitRate: i.prefixHitRate ?? null,
    sloMs: i.sloMs,
    e2eSloMs: i.e2eSloMs,
    successShare: i.successShare,
    usdPerReplicaHour: i.usdPerReplicaHour,
    kvUsage: i.kvUsage,
  });
}

/** Null when there is nothing to model (no requests, no SLO, no rate). */
export function planScale(i: ScalePlanInputs): ScalePlan | null {
  const model = modelPool(i);
  if (!model) return null;
  // Sized for the highest of now and the forecast's upper bound: a scale-in must hold even if the
  // load keeps rising as fast as it has been until it is verified; and for the share a shift taken
  // with it moves onto the pool.
  const { ratePerS: sizedRate, forecast } = loadOutlookPerS(i, i.horizonS);
  const loadFactor = (sizedRate * Math.max(1, i.shareGain ?? 1)) / i.mainRatePerS;
  const sizing = sizePool(model, i.replicas, {
    attainmentTarget: i.attainmentTarget,
    loadFactor,
    floor: i.floor,
    ceiling: i.ceiling,
  });
  return { model, sizing, forecast, loadFactor };
}

/** Requests/s of the sample: its count over the time it spans; null under two requests. */
function arrivalRatePerS(arrivals: readonly RequestArrival[]): number | null {
  if (arrivals.length < 2) return null;
  const spanMs = arrivals.at(-1)!.arriveMs - arrivals[0]!.arriveMs;
  return spanMs > 0 ? ((arrivals.length - 1) * 1000) / spanMs : null;
}
