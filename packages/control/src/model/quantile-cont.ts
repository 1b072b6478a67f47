/**
 * The q-quantile with linear interpolation between the two nearest ranks — DuckDB's
 * `quantile_cont`, the definition the signals use — so a predicted p95 compares with a measured one.
 */
export function quantileCont(values: ArrayLike<number>, q: number): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return Number.NaN;
  const pos = Math.min(1, Math.max(0, q)) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
