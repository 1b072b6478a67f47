import { quantileContOfSorted } from '@governor/conventions';

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/** DuckDB's quantile_cont of values sorted ascending (@governor/conventions); null when there are none. */
export function computeQuantile(sorted: ArrayLike<number>, q: number): number | null {
  return sorted.length === 0 ? null : quantileContOfSorted(sorted, q);
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
