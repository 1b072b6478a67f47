import { predictionZ } from './confidence.ts';

// Whether more replicas raise the fleet's tasks within the SLO per dollar, and how sure that is.
// The replicas win back the pool's out-of-SLO share in proportion to how much of its TTFT is load
// (queueing, contention), never past what the pool reaches when calm; they pay for themselves when
// what they win back, priced at the fleet's current cost per task within the SLO, covers what they
// cost: (good + gain) ÷ (cost + added) ≥ good ÷ cost, i.e. gain ≥ good × added ÷ cost. The gain is
// read from the pool's goodput over n requests, so it is as uncertain as that share (binomial).

export interface ScaleUpWeighing {
  /** The pool's share of requests within the SLO now, over `requests`. */
  goodput: number;
  requests: number;
  /** Share of TTFT that is load (queueing, or prefill slowed by contention), 0–1. */
  loadShare: number;
  /** The most of its requests the pool brings within the SLO however many replicas it has. */
  ceiling: number;
  /** The pool's requests/s. */
  ratePerS: number;
  /** The fleet's tasks within the SLO per second, and what it costs per hour now. */
  fleetGoodPerS: number;
  fleetUsdPerHour: number;
  /** What the added replicas cost per hour. */
  addedUsdPerHour: number;
}

export interface ScaleUpWorth {
  /** Tasks within the SLO per second the replicas win back. */
  gainPerS: number;
  /** Tasks within the SLO per dollar, now and with the replicas. */
  before: number;
  after: number;
  /** Worth its cost: it wins back some task and does not lower tasks within the SLO per dollar. */
  beneficial: boolean;
  /** z of the gain against the gain that pays for the replicas (confidence.ts). */
  z: number;
}

export function weighScaleUpGain(w: ScaleUpWeighing): ScaleUpWorth {
  const load = Math.min(1, Math.max(0, w.loadShare));
  const byLoad = (1 - w.goodput) * load;
  const byCeiling = Math.max(0, w.ceiling - w.goodput);
  const share = Math.min(byLoad, byCeiling);
  const gainPerS = share * w.ratePerS;
  const before = (w.fleetGoodPerS * 3600) / w.fleetUsdPerHour;
  const after = ((w.fleetGoodPerS + gainPerS) * 3600) / (w.fleetUsdPerHour + w.addedUsdPerHour);
  // Replicas that bring no task within the SLO only add cost, also when none is within it now
  // (tasks within the SLO per dollar 0 → 0 is no gain, however cheap the fleet).
  const beneficial = gainPerS > 0 && after >= before;
  const required =
    w.ratePerS > 0 ? (w.fleetGoodPerS * w.addedUsdPerHour) / (w.fleetUsdPerHour * w.ratePerS) : 0;
  // The goodput's binomial error, smoothed by one success and one failure so a pool at 0 or 1 still
  // has one; the win-back share moves with it by the load share (or one for one against the ceiling).
  const n = Math.max(0, w.requests);
  const q = (w.goodput * n + 1) / (n + 2);
  const se = n > 0 ? Math.sqrt((q * (1 - q)) / n) * (byLoad <= byCeiling ? load : 1) : 0;
  const z = gainPerS > 0 ? predictionZ(share, required, se) : Number.NEGATIVE_INFINITY;
  return { gainPerS, before, after, beneficial, z };
}
