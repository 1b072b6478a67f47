// Time ranges are event time. "Last 15 minutes" means the 15 minutes before the newest data
// Governor has (its watermark), so a replayed or simulated hour reads the same as a live one.

export const RANGE_PRESETS = [
  { key: '5m', label: 'Last 5 minutes', ms: 5 * 60_000 },
  { key: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { key: '1h', label: 'Last hour', ms: 3_600_000 },
  { key: '6h', label: 'Last 6 hours', ms: 6 * 3_600_000 },
  { key: '24h', label: 'Last 24 hours', ms: 24 * 3_600_000 },
  { key: '7d', label: 'Last 7 days', ms: 7 * 24 * 3_600_000 },
] as const;

export const DEFAULT_RANGE = '15m';

export interface TimeRange {
  fromMs: number;
  toMs: number;
  /** The preset key, or 'custom' for an absolute from/to. */
  key: string;
  label: string;
}

/** Resolves the URL's `range` (a preset) or `from`/`to` (RFC 3339) against the newest event time. */
export function resolveTimeRange(
  params: { range?: string; from?: string; to?: string },
  anchorMs: number,
): TimeRange {
  const from = params.from ? Date.parse(params.from) : Number.NaN;
  const to = params.to ? Date.parse(params.to) : Number.NaN;
  if (Number.isFinite(from) && Number.isFinite(to) && to > from) {
    return { fromMs: from, toMs: to, key: 'custom', label: `${formatClock(from)} – ${formatClock(to)}` };
  }
  const preset = RANGE_PRESETS.find((p) => p.key === params.range) ?? findPreset(DEFAULT_RANGE);
  return { fromMs: anchorMs - preset.ms, toMs: anchorMs, key: preset.key, label: preset.label };
}

function findPreset(key: string): (typeof RANGE_PRESETS)[number] {
  return RANGE_PRESETS.find((p) => p.key === key) ?? RANGE_PRESETS[1];
}

const NICE_STEPS_MS = [
  1_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000,
  7_200_000, 21_600_000, 43_200_000, 86_400_000,
];

/** A round bucket width that gives about `targetPoints` points over the span. */
export function chooseStepMs(spanMs: number, targetPoints = 60): number {
  const raw = spanMs / targetPoints;
  return NICE_STEPS_MS.find((step) => step >= raw) ?? NICE_STEPS_MS[NICE_STEPS_MS.length - 1]!;
}

/** `90_000` → `1m30s`; the format Governor's API accepts for windows and steps. */
export function formatDurationParam(ms: number): string {
  let rest = Math.max(1, Math.round(ms / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(`${n}${unit}`);
      rest -= n * size;
    }
  }
  return parts.join('');
}

/** `2025-01-01T10:00:00.000Z` for API parameters. */
export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Nanoseconds since the epoch as a BIGINT literal (for SQL over start_ns/end_ns). */
export function toNsLiteral(ms: number): string {
  return (BigInt(Math.round(ms)) * 1_000_000n).toString();
}

export function formatClock(ms: number): string {
  const d = new Date(ms);
  const sameDay = new Date().toDateString() === d.toDateString();
  return sameDay
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' })
    : d.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Parses a `datetime-local` input value (local time) into epoch ms. */
export function parseLocalDateTime(value: string): number | null {
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : null;
}

/** Epoch ms as a `datetime-local` input value (local time, seconds precision). */
export function toLocalDateTimeValue(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
