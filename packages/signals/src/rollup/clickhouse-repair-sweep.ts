import type { ClickHouseReader, ClickHouseRollupIo } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import type { ClickHouseRollup } from './roll-up-on-clickhouse.ts';

// Recovery of the request rollup on ClickHouse (docs/scale-out.md): a node rolls up the spans it
// acknowledged; what it held when it died — or a late span that reached a node whose run for that
// trace was over — is in span_store but not in request_facts. The leader's sweep finds such traces
// over a recent range (their facts count fewer spans than span_store holds) and rolls them up from
// every span stored. The rollup is idempotent, so a trace a live node is rolling up at the same
// moment gets the same rows twice (the later version wins; both are equal).

const UNROLLED_SQL = loadSql(import.meta.url, 'unrolled-traces.clickhouse.sql');

/** Spans of a trace are looked for this far outside the swept range. */
export const REPAIR_MARGIN_NS = 30n * 60n * 1_000_000_000n;

export interface RepairResult {
  traces: number;
  requestsWritten: number;
}

export async function repairClickHouseRollup(
  reader: ClickHouseReader,
  io: ClickHouseRollupIo,
  rollup: ClickHouseRollup,
  options: { fromNs: bigint; toNs: bigint; maxTraces: number; version: bigint },
): Promise<RepairResult> {
  const rows = await reader.query<{ trace_id: string }>(UNROLLED_SQL, {
    from_ns: options.fromNs,
    to_ns: options.toNs,
    margin_ns: REPAIR_MARGIN_NS,
    limit: options.maxTraces,
  });
  if (rows.length === 0) return { traces: 0, requestsWritten: 0 };
  // Their spans within the margin, as they were counted.
  const spans = await io.fetchSpans(
    rows.map((r) => r.trace_id),
    { fromNs: options.fromNs - REPAIR_MARGIN_NS + 1n, toNs: options.toNs + REPAIR_MARGIN_NS },
  );
  if (spans.length === 0) return { traces: 0, requestsWritten: 0 };
  const done = await rollup.rollUp(spans, options.version);
  return { traces: done.traces, requestsWritten: done.requestsWritten };
}
