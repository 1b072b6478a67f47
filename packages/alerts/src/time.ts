export const NS_PER_MS = 1_000_000n;

export function msToNs(ms: number): bigint {
  return BigInt(Math.round(ms)) * NS_PER_MS;
}

export function nsToMs(ns: bigint): number {
  return Number(ns / NS_PER_MS);
}

export function nsToRfc3339(ns: bigint): string {
  return new Date(nsToMs(ns)).toISOString();
}

export function msToRfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** The zero time Alertmanager uses for "not ended yet". */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Parses a bigint that DuckDB handed back as a decimal string (ns values exceed 2^53). */
export function toNs(value: unknown): bigint | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' || typeof value === 'string') return BigInt(value);
  throw new TypeError(`expected a nanosecond value, got ${typeof value}`);
}
