import type { RequestArrival } from '@governor/signals';

// The load a pool will carry when a decision taken now has taken effect: a replica asked for now
// serves after its cold start, so sizing for the load of the last five minutes sizes for the past.
// Two windows give a rate and its trend: the short window ends now, the rest of the control window
// lies before it, and their midpoints are half a control window apart. The trend is extrapolated
// over the lead time (cold start plus one control interval) from the short window's midpoint. Counts
// are Poisson, so each rate carries √count of noise; the forecast's standard error follows, widened
// by √dispersion where the pool's load is burstier than Poisson over the telemetry seen (a load
// that comes in bursts, as BurstGPT's traces and agent sessions do, varies more than its count says).

export interface LoadWindows {
  /** Requests/s over the control window (which includes the short window). */
  mainRatePerS: number;
  mainWindowS: number;
  /** Requests/s over the short window ending now. */
  fastRatePerS: number;
  fastWindowS: number;
  /** The counts' variance over their mean (≥ 1; 1, Poisson, when not given): demandDispersion. */
  dispersion?: number;
}

export interface LoadForecast {
  /** Requests/s expected at the end of the lead time. */
  ratePerS: number;
  /** One standard error of it. */
  stdErrPerS: number;
  /** Requests/s per second: the trend (negative when falling). */
  slopePerS2: number;
}

export function forecastLoad(w: LoadWindows, leadS: number): LoadForecast {
  const main = Math.max(0, w.mainRatePerS);
  const fast = Math.max(0, w.fastRatePerS);
  const olderS = w.mainWindowS - w.fastWindowS;
  // A load burstier than Poisson varies by √dispersion times a count's noise.
  const spread = Math.sqrt(Math.max(1, w.dispersion ?? 1));
  if (!(olderS > 0) || !(w.fastWindowS > 0)) {
    return {
      ratePerS: fast || main,
      stdErrPerS: spread * poissonErr(fast || main, w.fastWindowS || w.mainWindowS),
      slopePerS2: 0,
    };
  }
  const older = Math.max(0, (main * w.mainWindowS - fast * w.fastWindowS) / olderS);
  const gapS = w.mainWindowS / 2;
  const slope = (fast - older) / gapS;
  const horizonS = Math.max(0, leadS) + w.fastWindowS / 2;
  const rate = Math.max(0, fast + slope * horizonS);
  // Var(fast + (fast − older)·h/g) = (1 + h/g)²·Var(fast) + (h/g)²·Var(older).
  const k = horizonS / gapS;
  const err =
    spread *
    Math.sqrt((1 + k) ** 2 * poissonErr(fast, w.fastWindowS) ** 2 + k ** 2 * poissonErr(older, olderS) ** 2);
  return { ratePerS: rate, stdErrPerS: err, slopePerS2: slope };
}

/**
 * The load a decision must hold for until it is verified, in requests/s: the highest of the rates
 * seen now (control window and short window) and the forecast's upper bound (one standard error
 * over). Sizing a pool and giving a pool more traffic ask its model at this same load.
 */
export function loadOutlookPerS(
  w: LoadWindows,
  horizonS: number,
): { ratePerS: number; forecast: LoadForecast } {
  const forecast = forecastLoad(w, horizonS);
  const ratePerS = Math.max(w.fastRatePerS, w.mainRatePerS, forecast.ratePerS + forecast.stdErrPerS);
  return { ratePerS, forecast };
}

/** Standard error of a rate measured as a Poisson count over `windowS` (one event's worth when none). */
function poissonErr(ratePerS: number, windowS: number): number {
  if (!(windowS > 0)) return 0;
  return Math.sqrt(Math.max(1, ratePerS * windowS)) / windowS;
}

/**
 * How much burstier than Poisson a pool's load is: the variance over the mean of its request counts
 * in bins of `binMs` over the telemetry seen (the last `coveredMs` of a `windowMs` window; arrival
 * times on the window's axis), about their linear trend — the forecast extrapolates the trend, so
 * only what it leaves unexplained widens its error. The arrivals may be a sample of 1 in
 * `sampleScale` requests: thinning shrinks the excess over 1 by that factor, so it is scaled back.
 * 1 (Poisson) with fewer than three bins, and never below.
 */
export function loadDispersion(
  arrivalMs: readonly number[],
  windowMs: number,
  coveredMs: number,
  binMs: number,
  sampleScale: number,
): number {
  const bins = binMs > 0 ? Math.floor(Math.min(coveredMs, windowMs) / binMs) : 0;
  if (bins < 3) return 1;
  const counts = new Float64Array(bins);
  for (const t of arrivalMs) {
    const back = Math.floor((windowMs - t) / binMs);
    if (back >= 0 && back < bins) counts[back]! += 1;
  }
  // Least squares of count on bin index; the residuals' variance, with two parameters fitted.
  const meanX = (bins - 1) / 2;
  let mean = 0;
  for (const c of counts) mean += c / bins;
  if (!(mean > 0)) return 1;
  let sxy = 0;
  let sxx = 0;
  counts.forEach((c, x) => {
    sxy += (x - meanX) * (c - mean);
    sxx += (x - meanX) ** 2;
  });
  const slope = sxy / sxx;
  let sq = 0;
  counts.forEach((c, x) => {
    sq += (c - mean - slope * (x - meanX)) ** 2;
  });
  const observed = sq / (bins - 2) / mean;
  return Math.max(1, 1 + (observed - 1) * Math.max(1, sampleScale));
}

/**
 * The dispersion (loadDispersion) of a pool's demand: its first attempts only. Retries follow
 * failures — a retry storm is a fault's echo, which the retry budget answers — so their bursts say
 * nothing of how the load will vary once the fault has passed. The arrivals seen may be a sample of
 * the `ratePerS` the pool served over the covered span: the thinning is read from all of them.
 */
export function demandDispersion(
  arrivals: readonly Pick<RequestArrival, 'arriveMs' | 'attempt'>[],
  windowMs: number,
  coveredMs: number,
  binMs: number,
  ratePerS: number,
): number {
  const start = windowMs - coveredMs;
  const seen = arrivals.filter((a) => a.arriveMs >= start);
  const sampleScale = seen.length > 0 ? (ratePerS * coveredMs) / 1000 / seen.length : 1;
  const demand = seen.filter((a) => (a.attempt ?? 1) <= 1).map((a) => a.arriveMs);
  return loadDispersion(demand, windowMs, coveredMs, binMs, sampleScale);
}
