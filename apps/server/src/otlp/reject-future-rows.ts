import type { MetricPointRow, SpanRow } from '@governor/otlp';

// The event-time guard (as Prometheus' out-of-bounds samples, Loki's creation grace period): a
// row dated past `maxEventNs` (server clock + ingest.max_future_skew) would move the watermark
// into the future and blind every window until real time caught up, so it is not stored. Past
// times are never refused here: backfills and replays carry their own, older timestamps.

export interface FutureRowsVerdict {
  spans: SpanRow[];
  metrics: MetricPointRow[];
  /** Rows refused for being dated past maxEventNs. */
  rejected: number;
  /** One line for the partial-success message; empty when nothing was refused. */
  problem: string;
}

export function rejectFutureRows(
  spans: SpanRow[],
  metrics: MetricPointRow[],
  maxEventNs: bigint,
): FutureRowsVerdict {
  const inBounds = (ns: bigint | null | undefined) => ns === null || ns === undefined || ns <= maxEventNs;
  const spanInBounds = (s: SpanRow) => inBounds(s.startNs) && inBounds(s.endNs);
  const pointInBounds = (p: MetricPointRow) => inBounds(p.timeNs);
  // The common case, nothing refused, allocates nothing.
  if (spans.every(spanInBounds) && metrics.every(pointInBounds))
    return { spans, metrics, rejected: 0, problem: '' };
  const keptSpans = spans.filter(spanInBounds);
  const keptPoints = metrics.filter(pointInBounds);
  const rejected = spans.length - keptSpans.length + metrics.length - keptPoints.length;
  const newest = [...spans.map((s) => s.endNs), ...metrics.map((p) => p.timeNs)].reduce<bigint>(
    (a, b) => (b !== null && b !== undefined && b > a ? b : a),
    0n,
  );
  return {
    spans: keptSpans,
    metrics: keptPoints,
    rejected,
    problem:
      rejected === 0
        ? ''
        : `${rejected} dated more than ingest.max_future_skew ahead of the server clock (newest ${new Date(Number(newest / 1_000_000n)).toISOString()}, accepted up to ${new Date(Number(maxEventNs / 1_000_000n)).toISOString()}): check the sender's clock`,
  };
}
