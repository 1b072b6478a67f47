const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `5m`, `1h30m` → ms; null for anything else (e.g. `current`). Mirrors conventions' parseDurationMs. */
export function parseDurationMsSafe(text: string | null | undefined): number | null {
  if (!text) return null;
  const trimmed = text.trim();
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed) return null;
  return parts.reduce((total, p) => total + Number(p[1]) * (UNIT_MS[p[2]!] ?? 0), 0);
}
