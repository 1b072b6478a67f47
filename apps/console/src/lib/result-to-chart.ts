import type { SqlResult } from '../api/sql.ts';
import type { Series } from '../api/signals.ts';

// Turns a SQL result into chart data. The x column is time when its values read as time
// (TIMESTAMP, epoch ns/ms, ISO text) and categories otherwise. A `series` column splits rows
// into one series per value (long format); otherwise every numeric y column is a series.

export interface ChartSpec {
  x?: string | undefined;
  y?: string[] | undefined;
  series?: string | undefined;
}

export type ChartData =
  | { kind: 'time'; series: Series[]; fromMs: number; toMs: number }
  | { kind: 'category'; rows: Record<string, string | number | null>[]; labels: string[]; x: string }
  | { kind: 'none'; reason: string };

const NUMERIC_TYPE = /INT|DOUBLE|FLOAT|DECIMAL|REAL|NUMERIC|HUGEINT/i;
const TIME_TYPE = /TIMESTAMP|DATE/i;

export function toTimeMs(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value > 1e15 ? value / 1e6 : value > 1e11 ? value : value * 1000;
  if (typeof value === 'string') {
    if (/^\d+$/.test(value)) return toTimeMs(Number(value));
    const ms = Date.parse(value.includes('T') || value.endsWith('Z') ? value : value.replace(' ', 'T'));
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

function toNumber(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

function looksLikeTime(name: string, type: string, values: unknown[]): boolean {
  if (TIME_TYPE.test(type)) return true;
  if (!/(^|_)(ts|time|bucket|minute|hour|at|start_ns|end_ns|time_ns|t)$|_ns$|_ms$/i.test(name)) return false;
  return values.every((v) => v === null || toTimeMs(v) !== null);
}

export function resultToChart(result: SqlResult, spec: ChartSpec = {}): ChartData {
  const names = result.columns.map((c) => c.name);
  if (names.length < 2 || result.rows.length === 0) {
    return { kind: 'none', reason: 'A chart needs at least two columns and one row.' };
  }
  const xName = spec.x && names.includes(spec.x) ? spec.x : names[0]!;
  const xIndex = names.indexOf(xName);
  const seriesIndex = spec.series ? names.indexOf(spec.series) : -1;
  const yNames = (spec.y?.filter((y) => names.includes(y)) ?? []).length
    ? spec.y!.filter((y) => names.includes(y))
    : result.columns
        .filter(
          (c, i) =>
            i !== xIndex &&
            i !== seriesIndex &&
            (NUMERIC_TYPE.test(c.type) ||
              result.rows.every((r) => r[i] === null || typeof r[i] === 'number')),
        )
        .map((c) => c.name);
  if (yNames.length === 0) return { kind: 'none', reason: 'No numeric column to plot.' };
  const yIndexes = yNames.map((y) => names.indexOf(y));
  const xValues = result.rows.map((r) => r[xIndex]);
  const isTime = looksLikeTime(xName, result.columns[xIndex]!.type, xValues);

  const seriesOf = (row: unknown[], y: string): string =>
    seriesIndex >= 0
      ? yNames.length > 1
        ? `${String(row[seriesIndex])} · ${y}`
        : String(row[seriesIndex] ?? '(none)')
      : y;

  if (isTime) {
    const map = new Map<string, Series>();
    let fromMs = Number.POSITIVE_INFINITY;
    let toMs = Number.NEGATIVE_INFINITY;
    for (const row of result.rows) {
      const t = toTimeMs(row[xIndex]);
      if (t === null) continue;
      fromMs = Math.min(fromMs, t);
      toMs = Math.max(toMs, t);
      yIndexes.forEach((yi, k) => {
        const label = seriesOf(row, yNames[k]!);
        let s = map.get(label);
        if (!s) {
          s = { key: { series: label }, label, points: [] };
          map.set(label, s);
        }
        s.points.push({ t, value: toNumber(row[yi]) });
      });
    }
    if (!Number.isFinite(fromMs)) return { kind: 'none', reason: 'The x column has no time values.' };
    for (const s of map.values()) s.points.sort((a, b) => a.t - b.t);
    const series = [...map.values()].sort((a, b) => a.label.localeCompare(b.label));
    return { kind: 'time', series, fromMs, toMs: toMs === fromMs ? fromMs + 1000 : toMs };
  }

  const rowsByX = new Map<string, Record<string, string | number | null>>();
  const labels: string[] = [];
  for (const row of result.rows) {
    const x = String(row[xIndex] ?? '(null)');
    let out = rowsByX.get(x);
    if (!out) {
      out = { [xName]: x };
      rowsByX.set(x, out);
    }
    yIndexes.forEach((yi, k) => {
      const label = seriesOf(row, yNames[k]!);
      if (!labels.includes(label)) labels.push(label);
      out![label] = toNumber(row[yi]);
    });
  }
  if (seriesIndex >= 0) labels.sort((a, b) => a.localeCompare(b));
  return { kind: 'category', rows: [...rowsByX.values()], labels, x: xName };
}
