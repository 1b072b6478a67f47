/**
 * The request rollup's cost per run as a line, ms ≈ fixed + perSpan × spans, fitted by weighted
 * least squares to the runs observed, each weighted by 0.5^(age / halfLifeMs). A run has a fixed
 * cost (planning, the trace-facts query, the commit) and a cost per span: on the 2-core machine
 * (bench-rollup-refresh.ts, 1M spans rolled up) a run of 100 spans took 140 ms, one of 40,000 about
 * 1 s. Dividing run time by spans, as a single speed does, charges a backlog each small run's
 * fixed cost again per share of spans: after a checkpoint's stall it predicted several times what
 * the one large run then took.
 */
export interface RunCostModel {
  observe(spans: number, ms: number, nowMs: number): void;
  /**
   * Predicted ms to take in `spans` (in runs of at most `maxSpansPerRun`), null before any run with
   * spans was observed. While the runs seen were all about one size the line cannot be told from
   * its slope, and the prediction is the plain ratio (ms per span of the runs seen): an overestimate
   * for larger backlogs, never an underestimate.
   */
  predictMs(spans: number): number | null;
}

/** Runs whose sizes vary less than this (coefficient of variation) do not fit a line. */
const MIN_SIZE_SPREAD = 0.25;

export function createRunCostModel(
  halfLifeMs: number,
  maxSpansPerRun = Number.POSITIVE_INFINITY,
): RunCostModel {
  // Decayed sums: weight, Σx, Σy, Σx², Σxy (x = spans, y = ms).
  let w = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  let atMs: number | null = null;
  return {
    observe(spans, ms, nowMs) {
      if (!(spans > 0) || !(ms >= 0)) return;
      if (atMs !== null) {
        const decay = 0.5 ** (Math.max(0, nowMs - atMs) / halfLifeMs);
        w *= decay;
        sx *= decay;
        sy *= decay;
        sxx *= decay;
        sxy *= decay;
      }
      atMs = nowMs;
      w += 1;
      sx += spans;
      sy += ms;
      sxx += spans * spans;
      sxy += spans * ms;
    },
    predictMs(spans) {
      if (!(w > 0) || !(sx > 0)) return null;
      if (spans <= 0) return 0;
      const meanX = sx / w;
      const varX = Math.max(0, sxx / w - meanX * meanX);
      const ratio = (sy / sx) * spans;
      if (Math.sqrt(varX) < MIN_SIZE_SPREAD * meanX) return ratio;
      const slope = (w * sxy - sx * sy) / (w * sxx - sx * sx);
      const fixed = (sy - slope * sx) / w;
      // A negative slope or fixed cost is noise, not a model: keep the conservative ratio.
      if (!(slope > 0) || !(fixed >= 0)) return ratio;
      const runs = Number.isFinite(maxSpansPerRun) ? Math.ceil(spans / maxSpansPerRun) : 1;
      return runs * fixed + slope * spans;
    },
  };
}
