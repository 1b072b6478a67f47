// One percentile definition for the whole product: DuckDB's `quantile_cont`, which the signals use
// (linear interpolation between the two closest ranks, position q·(n−1); numpy's default). The
// control loop's replays, the simulator's run summaries, the benchmarks and the test references
// all compute with it, so a predicted or simulated p95 compares with a measured one.

/** The q-quantile of values already sorted ascending; NaN when there are none. */
export function quantileContOfSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const pos = Math.min(1, Math.max(0, q)) * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** The q-quantile of values in any order; NaN when there are none. */
export function quantileCont(values: ArrayLike<number>, q: number): number {
  return quantileContOfSorted(Float64Array.from(values).sort(), q);
}
