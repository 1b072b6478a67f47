/**
 * Nanoseconds since the epoch (decimal string, bigint or number) → epoch ms with µs precision.
 * Strings go through BigInt: nanosecond times exceed 2^53 and lose precision as plain numbers.
 */
export function nsToMs(value: string | bigint | number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value / 1e6 : null;
  try {
    const ns = typeof value === 'bigint' ? value : BigInt(value);
    return Number(ns / 1000n) / 1000;
  } catch {
    return null;
  }
}

/** RFC 3339 text, epoch ms, or epoch ns (number or digits) → epoch ms. */
export function anyTimeToMs(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'bigint') return nsToMs(value);
  if (typeof value === 'string') {
    if (/^\d+$/.test(value)) return value.length > 15 ? nsToMs(value) : Number(value);
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms : null;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return value > 1e15 ? value / 1e6 : value;
  return null;
}
