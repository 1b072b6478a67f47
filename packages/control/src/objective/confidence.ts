import { normalCdf } from '../health/pool-health.ts';

// A recommendation's confidence is the probability that what it rests on holds: that the quantity
// the decision reads — measured over the window, or predicted by the pool model — is truly on the
// side of its bound the action needs, given how uncertain that reading is. A reading z standard
// errors past its bound holds with probability Φ(z); one just at it, as likely as not (0.5). So a
// policy's min_confidence reads as a probability: 0.5 applies what more likely than not holds, 0.9
// what holds nine times in ten. Every detector states its reading, its bound and the sample behind
// it; none shapes a confidence of its own.
//
// The standard errors, by the kind of reading:
//   - a share of requests (errors, goodput, cache hits, tasks within the SLO): binomial, at the bound;
//   - a rate, or a latency, utilization or cost read from n requests, or a ratio of them: a count of
//     n is uncertain by √n (Poisson), so the reading by 1/√n of itself — on the log scale,
//     z = ln(reading ÷ bound) · √n;
//   - a prediction of the pool model: the standard error it states (predict-pool.ts).

/**
 * Φ(z), and never certain: with n observations behind it at most (n + 1) ÷ (n + 2) — Laplace's rule
 * of succession, the chance that the next observation agrees with n that all did. Two decimals,
 * rounded down so a confidence shown never overstates.
 */
export function confidenceOf(z: number, samples: number): number {
  const n = Number.isFinite(samples) ? Math.max(0, samples) : 0;
  // At the bound exactly 0.5 (the erf approximation is off by up to 1.5e-7 there).
  const p = Number.isNaN(z) || z === 0 ? 0.5 : normalCdf(z);
  return Math.floor(Math.min(p, (n + 1) / (n + 2)) * 100) / 100;
}

/** Which side of its bound a reading must be on for the action to hold. */
export type Side = 'above' | 'below';

/**
 * z of a reading taken from n requests (a rate, latency, utilization, cost, or a ratio of them)
 * against its bound: ln(reading ÷ bound) · √n, signed so that positive is the side the action needs.
 * ±∞ where the reading or the bound is not positive (0 is as far below any positive bound as a
 * reading goes).
 */
export function ratioZ(reading: number, bound: number, n: number, side: Side): number {
  const sign = side === 'above' ? 1 : -1;
  if (!(bound > 0)) return sign * Number.POSITIVE_INFINITY;
  if (!(reading > 0)) return -sign * Number.POSITIVE_INFINITY;
  return sign * Math.log(reading / bound) * Math.sqrt(Math.max(0, n));
}

/**
 * z of a share of n requests against its bound, with the binomial standard error at the bound (a test
 * of "the true share is the bound"), the bound smoothed by one success and one failure so that a
 * bound of 0 or 1 still has an error.
 */
export function shareZ(share: number, bound: number, n: number, side: Side): number {
  const sign = side === 'above' ? 1 : -1;
  if (!(n > 0)) return 0;
  const q = (bound * n + 1) / (n + 2);
  return (sign * (share - bound)) / Math.sqrt((q * (1 - q)) / n);
}

/**
 * z of a share measured on one set of requests being at least `by` above another's (a two-proportion
 * difference: pooled binomial standard error).
 */
export function shareDifferenceZ(
  higher: number,
  nHigher: number,
  lower: number,
  nLower: number,
  by: number,
): number {
  if (!(nHigher > 0) || !(nLower > 0)) return 0;
  const pooled = (higher * nHigher + lower * nLower + 1) / (nHigher + nLower + 2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / nHigher + 1 / nLower));
  return (higher - lower - by) / se;
}

/**
 * z of a predicted share against what is required of it, in the prediction's own standard error
 * (PoolPrediction.uncertainty / taskUncertainty).
 */
export function predictionZ(predicted: number, required: number, standardError: number): number {
  const d = predicted - required;
  if (!(standardError > 0)) return d >= 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  return d / standardError;
}

/**
 * A decision that rests on several readings at once holds only if each does: no surer than its
 * least sure reading (the smallest z).
 */
export function allOf(...zs: number[]): number {
  return zs.length === 0 ? 0 : Math.min(...zs);
}

/** A decision any one of several readings justifies holds if the surest does (the largest z). */
export function anyOf(...zs: number[]): number {
  const finite = zs.filter((z) => !Number.isNaN(z));
  return finite.length === 0 ? 0 : Math.max(...finite);
}
