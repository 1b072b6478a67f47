import type { RequestArrival } from '@governor/signals';
import { replayPrefillWaits } from '../detectors/replay-prefill-queue.ts';
import { quantileCont } from './quantile-cont.ts';

export { quantileCont };

// What a pool would do on a number of replicas under a share of today's load. The model is the
// pool's own recent requests (arrival times, uncached prompt tokens, the TTFT each really had)
// replayed on each replica count as first-come-first-served prefill servers at the pool's
// uncontended prefill speed (replay-prefill-queue.ts). The replay is anchored at the operating point:
// a request's TTFT on n replicas is the TTFT it had, less the wait the replay gives it on the replicas
// it had, plus the wait the replay gives it on n. So at today's replica count and load the model
// returns exactly what was measured, and only the queueing it explains changes with n or the load;
// what it leaves out (routing, decode interference, the network) stays as measured.
//
// Load is scaled in time: a load factor f puts the same requests f times closer together, keeping
// the prompt mix. Waits grow with f and shrink with n, so everything derived here is monotone in
// both (tested), which the sizing's bisection relies on.

export interface PoolObservation {
  /** The pool's recent requests in arrival order. */
  arrivals: readonly RequestArrival[];
  /** Replicas that served them. */
  replicas: number;
  /**
   * Requests the pool received per request in `arrivals` (1 ÷ the sampling ratio for head-sampled
   * traces; default 1). The replay packs the sample's arrivals this much closer, so the queue it
   * replays is the pool's, not the sample's; prediction load factors are relative to the real load.
   */
  sampleScale?: number;
  /** Requests/s the pool receives (sampling weights applied), of which `arrivals` is a sample. */
  ratePerS: number;
  /** Prefill ms per uncached prompt token on an uncontended replica. */
  msPerToken: number;
  /** TTFT objective (ms). */
  sloMs: number;
  /** Share of requests that did not fail for reasons other than latency (errors load does not explain). */
  successShare: number;
  /** What one replica costs per hour (its GPUs × their price); null when not priced. */
  usdPerReplicaHour: number | null;
}

export interface PoolPrediction {
  replicas: number;
  loadFactor: number;
  /** quantile_cont(0.95) of the predicted TTFTs. */
  ttftP95Ms: number;
  /** Share of requests whose predicted TTFT is within the SLO. */
  withinSloShare: number;
  /** Requests/s that succeed within the SLO. */
  goodTasksPerS: number;
  usdPerHour: number | null;
  /**
   * One standard error of `withinSloShare` from the sample's size (binomial, with one request's
   * worth added so a perfect small sample is not certain): the band inside which two predictions
   * cannot be told apart.
   */
  uncertainty: number;
}

/** Reusable per observation: the anchor waits are computed once for every replica count asked. */
export interface PoolModel {
  observation: PoolObservation;
  predict(replicas: number, loadFactor?: number): PoolPrediction;
  /** Share within the SLO with no queueing at all: what no replica count can improve on. */
  attainableShare: number;
}

export function createPoolModel(observation: PoolObservation): PoolModel | null {
  const { arrivals, msPerToken, sloMs } = observation;
  if (arrivals.length === 0 || !(observation.replicas >= 1) || !(msPerToken >= 0) || !(sloMs > 0))
    return null;
  const service = Float64Array.from(arrivals, (a) => Math.max(0, a.uncachedTokens) * msPerToken);
  const scale =
    observation.sampleScale !== undefined && observation.sampleScale > 0 ? observation.sampleScale : 1;
  const packed = (f: number) => (f === 1 ? arrivals : arrivals.map((a) => ({ arriveMs: a.arriveMs / f })));
  const anchorWaits = replayPrefillWaits(packed(scale), service, observation.replicas);
  // The part of each TTFT the replay's queue does not explain.
  const base = Float64Array.from(arrivals, (a, i) => Math.max(0, a.ttftMs - anchorWaits[i]!));
  const cache = new Map<string, PoolPrediction>();
  const predict = (replicas: number, loadFactor = 1): PoolPrediction => {
    const n = Math.max(1, Math.floor(replicas));
    const f = loadFactor > 0 ? loadFactor : 1;
    const key = `${n}:${f}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const waits = replayPrefillWaits(packed(f * scale), service, n);
    const ttft = Float64Array.from(base, (b, i) => b + waits[i]!);
    const prediction = summarize(observation, n, f, ttft);
    cache.set(key, prediction);
    return prediction;
  };
  let attainable = 0;
  for (const b of base) if (b <= sloMs) attainable += 1;
  return { observation, predict, attainableShare: attainable / base.length };
}

function summarize(
  o: PoolObservation,
  replicas: number,
  loadFactor: number,
  ttft: Float64Array,
): PoolPrediction {
  let within = 0;
  for (const t of ttft) if (t <= o.sloMs) within += 1;
  const n = ttft.length;
  const share = within / n;
  return {
    replicas,
    loadFactor,
    ttftP95Ms: quantileCont(ttft, 0.95),
    withinSloShare: share,
    goodTasksPerS: o.ratePerS * loadFactor * share * o.successShare,
    usdPerHour: o.usdPerReplicaHour === null ? null : replicas * o.usdPerReplicaHour,
    uncertainty: Math.sqrt((share * (1 - share) + 1 / n) / n),
  };
}
