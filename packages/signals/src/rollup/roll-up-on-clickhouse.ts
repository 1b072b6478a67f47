import type { GovernorConfig } from '@governor/conventions';
import type { SpanRow } from '@governor/otlp';
import { type ClickHouseRollupIo, type FactsRow, type Store, createStore } from '@governor/store';
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
  /** Earlier spans of the touched traces read back from span_store. */
  earlierSpans: number;
  requestsWritten: number;
  /** Wall-clock ms of each step. */
  stepMs: { read: number; scratch: number; refresh: number; write: number };
}

/**
 * Rolls up `newSpans` (already acknowledged into span_store) with the earlier spans and facts of
 * their traces and tasks. Only a trace that has facts already can have earlier spans (each span is
 * rolled up after it is written), so only those traces' spans are read back — without their
 * attributes, resource and events, which the rollup does not read.
 */
export async function rollUpOnClickHouse(
  io: ClickHouseRollupIo,
  newSpans: readonly SpanRow[],
  config: GovernorConfig,
  version: bigint,
): Promise<ClickHouseRollupResult> {
  const rollup = createClickHouseRollup(io, config);
  try {
    return await rollup.rollUp(newSpans, version);
  } finally {
    await rollup.close();
  }
}

export interface ClickHouseRollup {
  rollUp(newSpans: readonly SpanRow[], version: bigint): Promise<ClickHouseRollupResult>;
  close(): Promise<void>;
}

/**
 * A node's rollup: one scratch store kept across calls (emptied before each), as creating one costs
 * ~0.1 s. Calls run one at a time.
 */
export function createClickHouseRollup(io: ClickHouseRollupIo, config: GovernorConfig): ClickHouseRollup {
  let scratch: Promise<Store> | null = null;
  let chain: Promise<unknown> = Promise.resolve();
  const open = () => {
    // In memory: no checkpoints. During one a write goes to the ingest stage, not span_store, and a
    // run then read a span_store without the spans it had just written (seen once: "NOT NULL
    // constraint failed: request_facts_state.last_rowid", the run retried).
    scratch ??= createStore({
      dataDir: ':memory:',
      threads: 1,
      backgroundNice: null,
      memoryLimit: '512MB',
      checkpointRows: Number.MAX_SAFE_INTEGER,
      checkpointIntervalMs: Number.MAX_SAFE_INTEGER,
    });
    return scratch;
  };
  return {
    rollUp(newSpans, version) {
      const run = chain.then(async () => runOnce(io, await open(), config, newSpans, version));
      chain = run.catch(() => undefined);
      return run;
    },
    async close() {
      await chain;
      if (scratch) await (await scratch).close();
      scratch = null;
    },
  };
}

async function runOnce(
  io: ClickHouseRollupIo,
  scratch: Store,
  config: GovernorConfig,
  newSpans: readonly SpanRow[],
  version: bigint,
): Promise<ClickHouseRollupResult> {
  const t0 = performance.now();
  if (newSpans.length === 0)
    return {
      traces: 0,
      earlierSpans: 0,
      requestsWritten: 0,
      stepMs: { read: 0, scratch: 0, refresh: 0, write: 0 },
    };
  const traceIds = [...new Set(newSpans.map((s) => s.traceId))];
  const taskIds = new Set(
    newSpans.map((s) => s.workflowId ?? s.conversationId ?? null).filter((t): t is string => t !== null),
  );
  // Earlier rows as far back as the embedded refresh looks (refresh-request-facts.ts, reachBack):
  // from the task idle time before the new spans, lowered to the start of every task found there.
  const taskIdleNs = BigInt(config.signals.task_idle_ms) * 1_000_000n;
  let loEndNs = newSpans.map((s) => s.startNs).reduce(lesser) - taskIdleNs;
  let known: FactsRow[] = [];
  for (let round = 1; ; round++) {
    known = await io.fetchFacts(traceIds, [...taskIds], loEndNs);
    // A trace's task may be named only by spans that came earlier (its root): read that task's
    // other requests too.
    const moreTasks = known.map((f) => String(f.task_id)).filter((t) => !taskIds.has(t));
    for (const t of moreTasks) taskIds.add(t);
    let earliest = loEndNs;
    for (const f of known) {
      const start = toBigInt(f.task_start_ns);
      if (start !== null && start < earliest) earliest = start;
    }
    if (moreTasks.length === 0 && earliest >= loEndNs) break;
    loEndNs = round >= MAX_REACH_BACK_ROUNDS ? INT64_MIN : earliest;
  }
  const touched = new Set(traceIds);
  const seenFacts = known.filter((f) => touched.has(String(f.trace_id)));
  const seen = [...new Set(seenFacts.map((f) => String(f.trace_id)))];
  const fresh = new Set(newSpans.map(spanKey));
  // Each earlier span of these traces belongs to one of their requests found: it started within
  // them (first_span_ns … last_span_ns).
  const range = seenFacts.reduce<{ fromNs: bigint; toNs: bigint } | null>((r, f) => {
    const from = toBigInt(f.first_span_ns) ?? toBigInt(f.start_ns);
    const to = toBigInt(f.last_span_ns) ?? toBigInt(f.end_ns);
    if (from === null || to === null) return r;
    return r === null
      ? { fromNs: from, toNs: to }
      : { fromNs: lesser(from, r.fromNs), toNs: greater(to, r.toNs) };
  }, null);
  const earlier = (seen.length > 0 ? await io.fetchSpans(seen, range ?? undefined) : []).filter(
    (s) => !fresh.has(spanKey(s)),
  );
  const t1 = performance.now();
  await scratch.execute(EMPTY_SPANS_SQL);
  for (const statement of EMPTY_ROLLUP_SQL) await scratch.rollup.execute(statement);
  if (known.length > 0) await preload(scratch, known);
  if (earlier.length > 0) {
    await scratch.writer.write(earlier, []);
    await scratch.writer.whenMoved();
    await scratch.execute(MARK_REFRESHED_SQL);
  }
  await scratch.writer.write(newSpans, []);
  await scratch.writer.whenMoved();
  const t2 = performance.now();
  await createSignals(scratch, config).refresh({ force: true });
  const rows = await scratch.rollup.query<FactsRow>('SELECT * FROM rollup.main.request_facts');
  const t3 = performance.now();
  await io.writeFacts(rows, known, version);
  const t4 = performance.now();
  return {
    traces: traceIds.length,
    earlierSpans: earlier.length,
    requestsWritten: rows.length,
    stepMs: { read: t1 - t0, scratch: t2 - t1, refresh: t3 - t2, write: t4 - t3 },
  };
}

/** Rounds of the lookup reaching back to task starts before it looks through the whole history. */
const MAX_REACH_BACK_ROUNDS = 8;
const INT64_MIN = -(2n ** 63n);

function lesser(a: bigint, b: bigint): bigint {
  if (a < b) return a;
  return b;
}

function greater(a: bigint, b: bigint): bigint {
  if (a > b) return a;
  return b;
}

function toBigInt(value: unknown): bigint | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'bigint' ? value : BigInt(String(value));
}

const EMPTY_SPANS_SQL = 'DELETE FROM span_store';
/** The scratch rollup as a fresh store has it: no facts, nothing refreshed yet. */
const EMPTY_ROLLUP_SQL = [
  'DELETE FROM rollup.main.request_facts',
  `UPDATE rollup.main.request_facts_state SET last_rowid = -1, fp_trace_id = NULL, fp_span_id = NULL,
     newest_span_end_ns = NULL WHERE id = 1`,
];

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
