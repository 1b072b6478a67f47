import { MINUTE_NS } from './clickhouse-schema.ts';

// request_extent (clickhouse-schema.ts): per minute of start, the longest a request starting in it
// lasted. It turns "ended after T" — how windows select requests — into a bound on request_facts'
// sort key: a start at or after factsFromNs(T).

/**
 * The earliest minute a request ending after $from_ns can have started in: the first minute whose
 * start plus one minute plus its longest request passes $from_ns. `n` 0: no request ends after it.
 */
export const FACTS_FROM_SQL = `SELECT toString(min(minute_ns)) AS lo, count() AS n
FROM (
  SELECT minute_ns, max(max_duration_ns) AS d
  FROM {{database}}.request_extent
  GROUP BY minute_ns
)
WHERE minute_ns + ${MINUTE_NS} + d > $from_ns`;

/** The placeholder a query names for that bound; the ClickHouse reader fills it in from $from_ns. */
export const FACTS_FROM_PARAM = 'facts_from_ns';

/** factsFromNs from FACTS_FROM_SQL's row: with no request ending after `fromNs`, any bound holds. */
export function factsFromNs(row: { lo?: unknown; n?: unknown } | undefined, fromNs: bigint): bigint {
  if (!row || Number(row.n ?? 0) === 0) return fromNs;
  return BigInt(String(row.lo));
}

/** The minute (its first ns) a request starting at `startNs` is counted in. */
export function minuteOf(startNs: bigint): bigint {
  return (startNs / MINUTE_NS) * MINUTE_NS;
}

/**
 * The extent rows a write of facts adds: per minute of start, the longest of `rows`, for the minutes
 * where that exceeds what this process wrote before (`written`, updated; a process that starts again
 * writes again — reads take the maximum).
 */
export function extentRows(
  rows: readonly Record<string, unknown>[],
  written: Map<bigint, bigint>,
): { minute_ns: string; max_duration_ns: string }[] {
  const longest = new Map<bigint, bigint>();
  for (const row of rows) {
    if (row.start_ns === null || row.start_ns === undefined) continue;
    const start = BigInt(row.start_ns as bigint | string);
    const end =
      row.end_ns === null || row.end_ns === undefined ? start : BigInt(row.end_ns as bigint | string);
    const minute = minuteOf(start);
    const duration = end > start ? end - start : 0n;
    if (duration >= (longest.get(minute) ?? -1n)) longest.set(minute, duration);
  }
  const out: { minute_ns: string; max_duration_ns: string }[] = [];
  for (const [minute, duration] of longest) {
    const before = written.get(minute);
    if (before !== undefined && before >= duration) continue;
    written.set(minute, duration);
    out.push({ minute_ns: minute.toString(), max_duration_ns: duration.toString() });
  }
  // Bounded: the oldest minutes are forgotten first (a later write for one writes it again).
  for (const minute of written.keys()) {
    if (written.size <= MAX_REMEMBERED_MINUTES) break;
    written.delete(minute);
  }
  return out;
}

const MAX_REMEMBERED_MINUTES = 20_000;
