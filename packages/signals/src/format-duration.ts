const UNITS: readonly [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/** 300000 → "5m", 5400000 → "1h30m"; the inverse of parseDurationMs for whole milliseconds. */
export function formatDurationMs(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}

/** Nanoseconds since the epoch → RFC 3339 with millisecond precision (UTC). */
export function nsToRfc3339(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}
