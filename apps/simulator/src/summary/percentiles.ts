export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/** Linear interpolation between closest ranks (DuckDB's quantile_cont, numpy's default). */
export function computeQuantile(sorted: ArrayLike<number>, q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const position = (n - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower]!;
  const high = sorted[upper]!;
  return low + (high - low) * (position - lower);
}

export function computePercentiles(values: readonly number[]): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
  return {
    p50: round(computeQuantile(sorted, 0.5)),
    p95: round(computeQuantile(sorted, 0.95)),
    p99: round(computeQuantile(sorted, 0.99)),
  };
}
