import type { SignalGroup, SignalsSnapshot } from '@governor/conventions';
import { buildPath, requestJson } from '../lib/api-client.ts';
import { parseDurationMsSafe } from '../lib/parse-duration.ts';
import { formatDurationParam, toIso } from '../lib/time-range.ts';

export type { SignalGroup, SignalsSnapshot };

/** GET /api/signals over [fromMs, toMs] (window = the range, at = its end). */
export function fetchSignals(
  range: { fromMs: number; toMs: number } | null,
  by: string,
  signal?: AbortSignal,
): Promise<SignalsSnapshot> {
  const path = buildPath('/api/signals', {
    window: range ? formatDurationParam(range.toMs - range.fromMs) : null,
    by,
    at: range ? toIso(range.toMs) : null,
  });
  return requestJson<SignalsSnapshot>(path, signal ? { signal } : {});
}

export interface SeriesPoint {
  /** Bucket start, epoch ms. */
  t: number;
  value: number | null;
}

export interface Series {
  key: Record<string, string | number | null>;
  /** `pool-a` or `pool-a · llama-8b` */
  label: string;
  points: SeriesPoint[];
}

export interface SeriesResult {
  signal: string;
  stepMs: number | null;
  series: Series[];
}

/** GET /api/signals/series → one series per group. */
export async function fetchSeries(
  params: {
    signal: string;
    by?: string;
    fromMs: number;
    toMs: number;
    stepMs: number;
    filter?: Record<string, string>;
  },
  abort?: AbortSignal,
): Promise<SeriesResult> {
  const path = buildPath('/api/signals/series', {
    signal: params.signal,
    by: params.by ?? null,
    from: toIso(params.fromMs),
    to: toIso(params.toMs),
    step: formatDurationParam(params.stepMs),
    ...params.filter,
  });
  const raw = await requestJson<unknown>(path, abort ? { signal: abort } : {});
  return normalizeSeries(raw, params.signal);
}

/**
 * GET /api/signals/series answers `{signal, step: "1m", series: [{key, points: [{t, v}]}]}` where
 * `t` is the END of the step (RFC 3339). Charts and trace links want the bucket start, so points
 * move back by one step. `[t, v]` pairs and `value` are accepted too.
 */
export function normalizeSeries(raw: unknown, signal: string): SeriesResult {
  const body = (raw ?? {}) as Record<string, unknown>;
  const list = (
    Array.isArray(body.series) ? body.series : Array.isArray(body.groups) ? body.groups : []
  ) as Record<string, unknown>[];
  const step = body.stepMs ?? body.step;
  const stepMs =
    typeof step === 'number' ? step : typeof step === 'string' ? parseDurationMsSafe(step) : null;
  const shift = stepMs ?? 0;
  const series: Series[] = list.map((entry) => {
    const key = (entry.key ?? {}) as Record<string, string | number | null>;
    const rawPoints = (entry.points ?? entry.values ?? entry.data ?? []) as unknown[];
    const points = rawPoints
      .map(toPoint)
      .filter((p): p is SeriesPoint => p !== null)
      .map((p) => ({ t: p.t - shift, value: p.value }))
      .sort((a, b) => a.t - b.t);
    return { key, label: labelForKey(key), points };
  });
  // A stable order gives every pool the same colour on every chart.
  series.sort((a, b) => a.label.localeCompare(b.label));
  return {
    signal: typeof body.signal === 'string' ? body.signal : signal,
    stepMs,
    series,
  };
}

function toPoint(raw: unknown): SeriesPoint | null {
  if (Array.isArray(raw)) return makePoint(raw[0], raw[1]);
  if (raw && typeof raw === 'object') {
    const p = raw as Record<string, unknown>;
    return makePoint(p.t ?? p.at ?? p.time ?? p.ts ?? p.bucket, p.value ?? p.v ?? p.y);
  }
  return null;
}

function makePoint(time: unknown, value: unknown): SeriesPoint | null {
  const t = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : Number.NaN;
  if (!Number.isFinite(t)) return null;
  const v = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : null;
  return { t, value: v !== null && Number.isFinite(v) ? v : null };
}

export function labelForKey(key: Record<string, string | number | null>): string {
  const values = Object.values(key).filter((v) => v !== null && v !== undefined && v !== '');
  return values.length === 0 ? 'fleet' : values.join(' · ');
}

/** Rows for a Recharts chart: one object per time with a column per series label. */
export function pivotSeries(series: Series[]): { rows: Record<string, number | null>[]; labels: string[] } {
  const byTime = new Map<number, Record<string, number | null>>();
  for (const s of series) {
    for (const p of s.points) {
      let row = byTime.get(p.t);
      if (!row) {
        row = { t: p.t };
        byTime.set(p.t, row);
      }
      row[s.label] = p.value;
    }
  }
  const rows = [...byTime.values()].sort((a, b) => (a.t ?? 0) - (b.t ?? 0));
  return { rows, labels: series.map((s) => s.label) };
}
