// A Prometheus-style histogram of durations, kept by the component that times them and rendered
// on /metrics: per-bucket counts (non-cumulative here; cumulative in the exposition), sum, count.

export interface DurationHistogram {
  /** Upper bounds of the buckets, seconds, increasing; +Inf is implied. */
  readonly boundsS: readonly number[];
  /** Observations per bucket: counts[i] fell in (boundsS[i-1], boundsS[i]]; the last entry is above every bound. */
  readonly counts: number[];
  sumS: number;
  count: number;
}

export function createDurationHistogram(boundsS: readonly number[]): DurationHistogram {
  return { boundsS, counts: new Array<number>(boundsS.length + 1).fill(0), sumS: 0, count: 0 };
}

export function observeMs(histogram: DurationHistogram, ms: number): void {
  const s = ms / 1000;
  let i = 0;
  while (i < histogram.boundsS.length && s > histogram.boundsS[i]!) i++;
  histogram.counts[i]!++;
  histogram.sumS += s;
  histogram.count++;
}
