// Event time is bigint nanoseconds inside the loop; RFC 3339 at the API edge.

export const NS_PER_MS = 1_000_000n;
export const NS_PER_S = 1_000_000_000n;

export function nsToIso(ns: bigint): string {
  return new Date(Number(ns / NS_PER_MS)).toISOString();
}

/** Parses RFC 3339; null when the text is not a valid timestamp. */
export function isoToNs(text: string): bigint | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return null;
  // Keep sub-millisecond digits: Date.parse truncates them.
  const frac = /\.(\d+)/.exec(text)?.[1] ?? '';
  const subMsNs = frac.length > 3 ? BigInt(frac.slice(3, 9).padEnd(6, '0')) : 0n;
  return BigInt(ms) * NS_PER_MS + subMsNs;
}

export function secondsToNs(seconds: number): bigint {
  return BigInt(Math.round(seconds * 1000)) * NS_PER_MS;
}

export function nsToSeconds(ns: bigint): number {
  return Number(ns / NS_PER_MS) / 1000;
}
