import { toBigIntOrNull, toNumberOrNull } from '../sql-params.ts';

// runtime-metrics.sql's rows computed from the points in series order, for ClickHouse 18.16 (no
// window functions): the same rules, clause for clause (that file states them) — a sample adds its
// rise since the series' previous sample when the series' start is unchanged and the value did not
// go down; a series that is new, restarted or went down adds its value if it started inside the
// window; nothing else. Histograms add their bucket counts the same way. The shared suite
// (runtime-metrics.int.test.ts) holds the two to the same rows.

type Row = Record<string, unknown>;

export type RuntimeCountRow = {
  pool: string;
  name: string;
  reason: string | null;
  n: number;
  bounds: number[] | null;
  counts: number[] | null;
};

interface Point {
  timeNs: bigint;
  startNs: bigint | null;
  v: number | null;
  b: number[] | null;
  bounds: number[] | null;
}

/** `rows` in runtime-points.clickhouse.sql's order (series by series, by time). */
export function runtimeIncreases(rows: readonly Row[], fromNs: bigint): RuntimeCountRow[] {
  const counters = new Map<string, RuntimeCountRow>();
  const histograms = new Map<
    string,
    { pool: string; name: string; bounds: number[]; sums: (number | null)[] }
  >();
  let seriesKey: string | null = null;
  let prev: Point | null = null;
  for (const row of rows) {
    const key = JSON.stringify([row.pool, row.p_replica, row.name, row.series]);
    if (key !== seriesKey) {
      seriesKey = key;
      prev = null;
    }
    const p: Point = {
      timeNs: toBigIntOrNull(row.time_ns) ?? 0n,
      startNs: toBigIntOrNull(row.start_ns),
      v: toNumberOrNull(row.v),
      b: numberList(row.b),
      bounds: numberList(row.bounds),
    };
    const last = prev;
    prev = p;
    if (p.timeNs <= fromNs) continue;
    const sameStart = last !== null && last.startNs === p.startNs;
    const rose = last !== null && p.v !== null && last.v !== null ? p.v >= last.v : null;
    const fell = last !== null && p.v !== null && last.v !== null ? p.v < last.v : null;
    const continued = last !== null && sameStart && rose === true;
    const fresh = (last === null || !sameStart || fell === true) && p.startNs !== null && p.startNs > fromNs;
    const pool = String(row.pool);
    const name = String(row.name);
    const inc = continued ? p.v! - last!.v! : fresh ? p.v : null;
    let binc: (number | null)[] | null = null;
    if (p.b !== null) {
      if (continued && last!.b !== null && p.b.length === last!.b.length)
        binc = p.b.map((n, i) => n - last!.b![i]!);
      else if (fresh) binc = p.b;
    }
    if (binc === null) {
      // As in the SQL: a histogram sample whose buckets cannot be differenced counts like a counter.
      if (inc === null) continue;
      const reason = typeof row.reason === 'string' && row.reason !== '' ? row.reason : null;
      const id = JSON.stringify([pool, name, reason]);
      const c = counters.get(id) ?? { pool, name, reason, n: 0, bounds: null, counts: null };
      c.n += inc;
      counters.set(id, c);
      continue;
    }
    const id = JSON.stringify([pool, name]);
    const h = histograms.get(id) ?? { pool, name, bounds: p.bounds ?? [], sums: [] };
    binc.forEach((n, i) => {
      h.sums[i] = n === null ? (h.sums[i] ?? null) : (h.sums[i] ?? 0) + n;
    });
    histograms.set(id, h);
  }
  const out = [...counters.values()];
  for (const h of histograms.values()) {
    const counts = h.sums.map((n) => n ?? 0);
    out.push({
      pool: h.pool,
      name: h.name,
      reason: null,
      n: counts.reduce((a, b) => a + b, 0),
      bounds: h.bounds,
      counts,
    });
  }
  return out;
}

function numberList(value: unknown): number[] | null {
  let list = value;
  if (typeof value === 'string') {
    if (value === '') return null;
    try {
      list = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return Array.isArray(list) ? list.map(Number) : null;
}
