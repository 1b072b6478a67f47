const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses durations such as `500ms`, `30s`, `5m`, `1h30m`, `2d`; throws with a clear message otherwise. */
export function parseDurationMs(text: string): number {
  const trimmed = text.trim();
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  const consumed = parts.map((p) => p[0]).join('');
  if (parts.length === 0 || consumed !== trimmed) {
    throw new Error(
      `invalid duration "${text}": expected a number with a unit (ms, s, m, h, d), e.g. 5m or 1h30m`,
    );
  }
  return parts.reduce((total, p) => total + Number(p[1]) * (UNIT_MS[p[2]!] ?? 0), 0);
}
