import type { ClickHouseReader, ClickHouseRollupIo } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import type { ClickHouseRollup } from './roll-up-on-clickhouse.ts';

// Recovery of the request rollup on ClickHouse (docs/scale-out.md): a node rolls up the spans it
// acknowledged; what it held when it died — or a late span that reached a node whose run for that
// trace was over — is in span_store but not in request_facts. The leader's sweep finds such traces
// over a recent range (their facts count fewer spans than span_store holds) and rolls them up from
// every span stored. The rollup is idempotent, so a trace a live node is rolling up at the same
// moment gets the same rows twice (the later version wins; both are equal).
//
// A live node rolls up what it acknowledged within ingest.max_rollup_lag (past that it refuses
// exports), so a trace it has not rolled up yet is not lost. The leader's sweep (createRepairSweep)
// therefore repairs a trace only once it has been found unrolled for longer than that (`settleMs`):
// otherwise every sweep would redo a share of the live nodes' work — measured with bench ingest on
// two nodes, the leader acknowledged 2,381 spans/s against the other node's 4,160.

const UNROLLED_SQL = loadSql(import.meta.url, 'unrolled-traces.clickhouse.sql');

/** Spans of a trace are looked for this far outside the swept range. */
export const REPAIR_MARGIN_NS = 30n * 60n * 1_000_000_000n;

export interface RepairResult {
  /** Traces rolled up. */
  traces: number;
  requestsWritten: number;
  /** Traces found unrolled but not yet past the settle time (createRepairSweep). */
  waiting: number;
}

export interface RepairRange {
  fromNs: bigint;
  toNs: bigint;
  /** Traces per query and per rollup call. */
  maxTraces: number;
}

/** Every trace unrolled in the range, page by page (by trace id). */
async function findUnrolled(reader: ClickHouseReader, range: RepairRange): Promise<string[]> {
  const found: string[] = [];
  let after = '';
  for (;;) {
    const rows = await reader.query<{ trace_id: string }>(UNROLLED_SQL, {
      from_ns: range.fromNs,
      to_ns: range.toNs,
      margin_ns: REPAIR_MARGIN_NS,
      limit: range.maxTraces,
      after,
    });
    for (const r of rows) found.push(r.trace_id);
    if (rows.length < range.maxTraces) return found;
    after = rows[rows.length - 1]!.trace_id;
  }
}

/** Rolls these traces up from their stored spans within the margin, as they were counted. */
async function rollUpTraces(
  io: ClickHouseRollupIo,
  rollup: ClickHouseRollup,
  traceIds: readonly string[],
  range: RepairRange,
  version: bigint,
): Promise<{ traces: number; requestsWritten: number }> {
  let traces = 0;
  let requestsWritten = 0;
  for (let i = 0; i < traceIds.length; i += range.maxTraces) {
    const spans = await io.fetchSpans(traceIds.slice(i, i + range.maxTraces), {
      fromNs: range.fromNs - REPAIR_MARGIN_NS + 1n,
      toNs: range.toNs + REPAIR_MARGIN_NS,
    });
    if (spans.length === 0) continue;
    const done = await rollup.rollUp(spans, version);
    traces += done.traces;
    requestsWritten += done.requestsWritten;
  }
  return { traces, requestsWritten };
}

/** Rolls up every trace unrolled in the range now (a dead node's spans, once nothing else runs). */
export async function repairClickHouseRollup(
  reader: ClickHouseReader,
  io: ClickHouseRollupIo,
  rollup: ClickHouseRollup,
  options: RepairRange & { version: bigint },
): Promise<RepairResult> {
  const found = await findUnrolled(reader, options);
  return { ...(await rollUpTraces(io, rollup, found, options, options.version)), waiting: 0 };
}

export interface RepairSweep {
  /** Finds the unrolled traces of the range; rolls up those found unrolled for settleMs already. */
  sweep(range: RepairRange, version: bigint): Promise<RepairResult>;
}

export function createRepairSweep(
  reader: ClickHouseReader,
  io: ClickHouseRollupIo,
  rollup: ClickHouseRollup,
  options: { settleMs: number; now?: () => number },
): RepairSweep {
  const now = options.now ?? Date.now;
  /** Trace id → when a sweep first found it unrolled (ms). */
  const firstSeen = new Map<string, number>();
  return {
    async sweep(range, version) {
      const found = await findUnrolled(reader, range);
      const at = now();
      const due: string[] = [];
      const still = new Map<string, number>();
      for (const id of found) {
        const seen = firstSeen.get(id) ?? at;
        if (at - seen >= options.settleMs) due.push(id);
        else still.set(id, seen);
      }
      // Traces no longer found were rolled up meanwhile (or left the range): forgotten.
      firstSeen.clear();
      for (const [id, seen] of still) firstSeen.set(id, seen);
      return { ...(await rollUpTraces(io, rollup, due, range, version)), waiting: still.size };
    },
  };
}
