import type { GovernorConfig } from '@governor/conventions';
import type { SpanRow } from '@governor/otlp';
import { type ClickHouseRollupIo, type FactsRow, createStore } from '@governor/store';
import { createSignals } from '../create-signals.ts';

// A node's rollup onto ClickHouse (docs/scale-out-design.md, decision 3): request facts computed by
// the same SQL as the embedded store's, in a scratch in-memory DuckDB that holds only what the
// recomputation needs — every span of the touched traces (from span_store) and the newest facts of
// those traces and of every other request of their tasks (from request_facts) — and written back as
// a new version of each trace's rows. The scratch store's own refresh does the work, in the state
// the embedded store's would be in: the traces' earlier spans are written first and marked as
// refreshed (their facts are the preloaded ones), then the new spans, which the refresh applies.
// The result depends on that order as the embedded rollup's does: a trace's spans further apart
// than the idle time stay separate requests until a span covering the gap arrives.
//
// Not yet: the pool of a request that failed before any runtime, from the pod at its endpoint (the
// embedded refresh reads recent request_facts and `up` points for it; the scratch store holds
// neither beyond the touched tasks).

export interface ClickHouseRollupResult {
  traces: number;
  spans: number;
  requestsWritten: number;
}

/**
 * Rolls up `newSpans` (already acknowledged into span_store) with the earlier spans and facts of
 * their traces and tasks.
 */
export async function rollUpOnClickHouse(
  io: ClickHouseRollupIo,
  newSpans: readonly SpanRow[],
  config: GovernorConfig,
  version: bigint,
): Promise<ClickHouseRollupResult> {
  const traceIds = [...new Set(newSpans.map((s) => s.traceId))];
  const spans = await io.fetchSpans(traceIds);
  const fresh = new Set(newSpans.map(spanKey));
  const earlier = spans.filter((s) => !fresh.has(spanKey(s)));
  const taskIds = [
    ...new Set(
      spans.map((s) => s.workflowId ?? s.conversationId ?? null).filter((t): t is string => t !== null),
    ),
  ];
  const known = await io.fetchFacts(traceIds, taskIds);
  const scratch = await createStore({
    dataDir: ':memory:',
    threads: 1,
    backgroundNice: null,
    memoryLimit: '512MB',
  });
  try {
    if (known.length > 0) await preload(scratch, known);
    if (earlier.length > 0) {
      await scratch.writer.write(earlier, []);
      await scratch.execute(MARK_REFRESHED_SQL);
    }
    await scratch.writer.write(newSpans, []);
    await createSignals(scratch, config).refresh({ force: true });
    const rows = await scratch.rollup.query<FactsRow>('SELECT * FROM rollup.main.request_facts');
    await io.writeFacts(rows, known, version);
    return { traces: traceIds.length, spans: spans.length, requestsWritten: rows.length };
  } finally {
    await scratch.close();
  }
}

const spanKey = (s: SpanRow) => `${s.traceId}|${s.spanId}`;

/** The rollup's state as after a refresh of every span written so far (refresh-request-facts.ts). */
const MARK_REFRESHED_SQL = `UPDATE rollup.main.request_facts_state SET
  last_rowid = (SELECT max(rowid) FROM span_store),
  fp_trace_id = (SELECT trace_id FROM span_store WHERE rowid = (SELECT max(rowid) FROM span_store)),
  fp_span_id = (SELECT span_id FROM span_store WHERE rowid = (SELECT max(rowid) FROM span_store)),
  newest_span_end_ns = (SELECT max(end_ns) FROM span_store)
WHERE id = 1`;

/** Writes facts rows into the scratch store's request_facts (json_transform keeps Int64 exact). */
async function preload(
  scratch: Awaited<ReturnType<typeof createStore>>,
  rows: readonly FactsRow[],
): Promise<void> {
  const columns = await scratch.rollup.query<{ column_name: string; column_type: string }>(
    'DESCRIBE rollup.main.request_facts',
  );
  const structure = JSON.stringify([Object.fromEntries(columns.map((c) => [c.column_name, c.column_type]))]);
  const json = JSON.stringify(rows, (_key, value) =>
    typeof value === 'bigint'
      ? `\u0000big:${value}`
      : typeof value === 'number' && !Number.isFinite(value)
        ? String(value)
        : value,
  ).replace(/"\\u0000big:(-?\d+)"/g, '$1');
  await scratch.rollup.execute(
    `INSERT INTO rollup.main.request_facts BY NAME
     SELECT unnest(json_transform($rows, $structure), recursive := true)`,
    { rows: json, structure },
  );
}
