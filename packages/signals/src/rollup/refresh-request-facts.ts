import type { Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import { toBigIntOrNull, toNumberOrNull } from '../sql-params.ts';
import { createRunCostModel } from './run-cost-model.ts';

// Incremental maintenance of request_facts (one row per trace, see trace-facts.sql). A refresh
// finds the spans appended since the previous one (by rowid), recomputes the traces they belong to
// from all of their spans, and the task columns of every request of their tasks. Rows are found by
// integer keys given as literal lists while a batch is small (a read's refresh of a few traces);
// a larger one uses joins instead. Earlier rows are looked up only as far back as a task stays
// open (signals.task_idle_ms before the new spans), and back to the start of the tasks found there
// (reachBack): the lookups cost what that recent past holds, not the whole history.

const PLAN_NEW_SPANS_SQL = loadSql(import.meta.url, 'plan-new-spans.sql');
const PLAN_NEW_TRACES_SQL = loadSql(import.meta.url, 'plan-new-traces.sql');
const PLAN_BULK_RANGE_SQL = loadSql(import.meta.url, 'plan-bulk-range.sql');
const KNOWN_FACTS_SQL = loadSql(import.meta.url, 'known-facts.sql');
const APPLY_SQL = loadSql(import.meta.url, 'apply-refresh.sql');
/** The apply script's statements, run one at a time so each is timed (RefreshSteps). */
const APPLY_STATEMENTS = APPLY_SQL.replace(/^\s*--.*$/gm, '')
  .split(/;\s*$/m)
  .map((statement) => statement.trim())
  .filter((statement) => statement.length > 0)
  .map((sql) => ({ sql, step: stepOf(sql) }));
/** Rows written to the rollup's database file, or time, between its checkpoints. */
const ROLLUP_CHECKPOINT_ROWS = 100_000;
const ROLLUP_CHECKPOINT_MS = 30_000;
const STATE_SQL = 'SELECT * FROM rollup.main.request_facts_state WHERE id = 1';
const NEXT_ROWID_SQL = 'SELECT max(rowid) AS max_rowid FROM span_store WHERE rowid > $last_rowid';
const MOVED_FINGERPRINT_SQL =
  'SELECT min(rowid) AS rowid FROM span_store WHERE trace_id = $trace_id AND span_id = $span_id';
const FINGERPRINT_SQL =
  'SELECT count(*) AS n FROM span_store WHERE rowid = $rowid AND trace_id = $trace_id AND span_id = $span_id';

/** Spans read per run; the caller of a run loops while more remain. */
const MAX_SPANS_PER_RUN = 2_000_000n;
/**
 * Up to this many touched traces, rows are found through literal key lists; beyond, by joins. Per
 * refresh over 1M spans rolled up, literal lists against joins: 100 ms vs 98 at 100 traces, 200 vs
 * 166 at 500, 385 vs 217 at 2,500 (IN lists of thousands of literals cost to plan and to evaluate).
 */
const MAX_LITERAL_TRACES = 200;
/** After rowids moved and the last refreshed span is gone too, recompute this much event time. */
const CATCH_UP_HORIZON_NS = 3_600_000_000_000n;
const INT64_MIN = -(2n ** 63n);
/** signals.task_idle_ms's default, for a refresher created before any Signals configured it. */
const DEFAULT_TASK_IDLE_NS = 1_800_000_000_000n;
/** Rounds of reachBack before it looks through the whole history instead. */
const MAX_REACH_BACK_ROUNDS = 8;
const TRACE_ID = /^[0-9a-f]{32}$/;
/** An IN list matching no trace. */
const NO_TRACES = 'SELECT NULL::VARCHAR WHERE false';

export interface RefreshResult {
  /** Runs of the apply script (each reads at most 2M new spans). */
  runs: number;
  tracesTouched: number;
  requestsWritten: number;
  /** True when rowids had moved (retention) and the refresh caught up by event time. */
  caughtUp: boolean;
  elapsedMs: number;
}

export interface FactsRefresher {
  /** Brings request_facts up to date with everything committed so far; concurrent calls share a run. */
  refresh(): Promise<RefreshResult>;
  /** refresh(), skipped (null) when nothing was written through the store since the last run. */
  ensureFresh(): Promise<RefreshResult | null>;
  /** Newest span end seen by the refreshes (event time), null before any span. */
  newestSpanEndNs(): Promise<bigint | null>;
  /** How far the rollup is behind ingest (RollupLag). */
  lag(): RollupLag;
  /** Wall-clock seconds spent in each step of the refresh since start (RefreshStep). */
  stepSeconds(): Record<RefreshStep, number>;
}

/**
 * The steps of a refresh, as `governor_rollup_refresh_step_seconds_total` reports them: plan (finding
 * the new spans and their traces), known_facts (looking up what earlier refreshes wrote for them),
 * new_spans, trace_facts (the touched traces from all of their spans), pool_fill, old_facts, tasks
 * (the requests to rewrite), delete, write (their task columns computed as the rows are written),
 * state, commit, checkpoint (of the rollup's own database file, every ROLLUP_CHECKPOINT_ROWS rows
 * written or ROLLUP_CHECKPOINT_MS) and other (BEGIN, drops).
 */
export const REFRESH_STEPS = [
  'plan',
  'known_facts',
  'new_spans',
  'trace_facts',
  'pool_fill',
  'old_facts',
  'tasks',
  'delete',
  'write',
  'state',
  'commit',
  'checkpoint',
  'other',
] as const;
export type RefreshStep = (typeof REFRESH_STEPS)[number];

/** Which step a statement of apply-refresh.sql is. */
function stepOf(sql: string): RefreshStep {
  const table = /^CREATE OR REPLACE TEMP TABLE (\w+)/.exec(sql)?.[1];
  if (table === 'sig_traces') return 'new_spans';
  if (table === 'sig_trace_facts') return 'trace_facts';
  if (table === 'sig_old') return 'old_facts';
  if (table === 'sig_tasks') return 'tasks';
  if (table === 'sig_rewrite') return 'tasks';
  if (sql.startsWith('UPDATE sig_trace_facts')) return 'pool_fill';
  if (sql.startsWith('DELETE FROM rollup.main.request_facts')) return 'delete';
  if (sql.startsWith('INSERT INTO rollup.main.request_facts')) return 'write';
  if (sql.startsWith('UPDATE rollup.main.request_facts_state')) return 'state';
  if (sql === 'COMMIT') return 'commit';
  return 'other';
}

export interface RollupLag {
  /**
   * Wall-clock ms: 0 when every span written so far is in request_facts, else the time since it
   * last was (the start of the last run that completed).
   */
  ms: number;
  /**
   * What a read arriving now would wait for: ms the refresh needs for the spans written but not yet
   * rolled up, by the cost of its recent runs (a fixed cost per run plus a cost per span, fitted
   * with a half-life of a minute: RunCostModel). A checkpoint stalls the rollup without slowing it:
   * `ms` grows, this stays small; ingest faster than the rollup makes both grow. The wall-clock `ms`
   * until a run with spans has been timed.
   */
  catchUpMs: number;
  /** The last run failed, so neither figure says anything about capacity. */
  failing: boolean;
}

/** Half-life, in wall-clock time, of the runs the refresh's cost is fitted to. */
const SPEED_HALF_LIFE_MS = 60_000;

const refreshers = new WeakMap<Store, FactsRefresher>();

export interface FactsRefresherOptions {
  /** signals.task_idle_ms in ns: how long a task stays open (task-columns.sql). */
  taskIdleNs?: bigint;
}

interface RefresherSettings {
  taskIdleNs: bigint;
}

const refresherSettings = new WeakMap<Store, RefresherSettings>();

/**
 * One refresher per store, shared by every Signals instance over it (alerts, control, the API).
 * Options given (createSignals passes the config's) apply from the next run on.
 */
export function getFactsRefresher(store: Store, options: FactsRefresherOptions = {}): FactsRefresher {
  let settings = refresherSettings.get(store);
  if (!settings) {
    settings = { taskIdleNs: DEFAULT_TASK_IDLE_NS };
    refresherSettings.set(store, settings);
  }
  if (options.taskIdleNs !== undefined) settings.taskIdleNs = options.taskIdleNs;
  let refresher = refreshers.get(store);
  if (!refresher) {
    refresher = createFactsRefresher(store, settings);
    refreshers.set(store, refresher);
  }
  return refresher;
}

/**
 * The rows `lookup` finds at or after an end time, starting from `horizonNs` and lowered to the
 * earliest task_start_ns among the rows found until no task they belong to starts earlier: then
 * every request of every task found is among them (a request ends after its task started), so the
 * rewrite sees whole tasks. A task or trace with nothing at or after the horizon is not found: its
 * next request is a new task (task-columns.sql), its next span a new request until a span that
 * covers the gap arrives (it starts earlier, and so does the lookup).
 */
async function reachBack(horizonNs: bigint, lookup: (loEndNs: bigint) => Promise<Row[]>): Promise<Row[]> {
  let lo = horizonNs;
  for (let round = 1; ; round++) {
    const rows = await lookup(lo);
    let earliest = lo;
    for (const row of rows) {
      // A known fact's task start, or the least of them (plan-bulk-range.sql).
      const start = toBigIntOrNull(row.task_start_ns ?? row.min_task_start_ns);
      if (start !== null && start < earliest) earliest = start;
    }
    if (earliest >= lo) return rows;
    lo = round >= MAX_REACH_BACK_ROUNDS ? INT64_MIN : earliest;
  }
}

type Row = Record<string, unknown>;

interface Batch {
  mode: 'incremental' | 'catch-up';
  loRowid: bigint;
  hiRowid: bigint;
  maxRowid: bigint;
  minStartNs: bigint;
}

function createFactsRefresher(store: Store, settings: RefresherSettings): FactsRefresher {
  let running: Promise<RefreshResult> | null = null;
  let queued: Promise<RefreshResult> | null = null;
  let writtenAtLastRun = -1;
  const writtenSoFar = () => store.writer.stats().spansWritten;
  // Every span written before this wall-clock time (ms) is in request_facts; and whether the last
  // run failed.
  let currentAtMs = Date.now();
  let coveredWritten = 0;
  let lastRunFailed = false;
  // What a run costs: ms ≈ fixed + perSpan × spans, fitted to the recent runs (decayed by
  // SPEED_HALF_LIFE_MS).
  const runCost = createRunCostModel(SPEED_HALF_LIFE_MS, Number(MAX_SPANS_PER_RUN));
  const stepMs = Object.fromEntries(REFRESH_STEPS.map((step) => [step, 0])) as Record<RefreshStep, number>;
  const timed = async <T>(step: RefreshStep, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      stepMs[step] += performance.now() - started;
    }
  };

  /** The next batch of new spans, or null when there is none. */
  const nextBatch = (): Promise<Batch | null> => timed('plan', findNextBatch);
  const findNextBatch = async (): Promise<Batch | null> => {
    const [state = {}] = await store.rollup.query<Row>(STATE_SQL);
    const lastRowid = toBigIntOrNull(state.last_rowid) ?? -1n;
    if (lastRowid >= 0n) {
      // No fingerprint (an older version's refresh found no row at its last rowid) counts as moved.
      const fpTrace = typeof state.fp_trace_id === 'string' ? state.fp_trace_id : null;
      const fpSpan = typeof state.fp_span_id === 'string' ? state.fp_span_id : null;
      const fingerprinted = fpTrace !== null && fpSpan !== null;
      const [fp] = fingerprinted
        ? await store.rollup.query<{ n: number }>(FINGERPRINT_SQL, {
            rowid: lastRowid,
            trace_id: fpTrace,
            span_id: fpSpan,
          })
        : [];
      if ((fp?.n ?? 0) === 0) {
        // Another span sits at the last refreshed rowid: deletions (retention) compacted span_store
        // and moved rowids. Compaction keeps the order of the rows, so where that span is now, the
        // spans up to it are the ones refreshed before (the first copy, should it have been
        // delivered twice: at worst a few spans are refreshed again).
        const [moved] = fingerprinted
          ? await store.rollup.query<Row>(MOVED_FINGERPRINT_SQL, { trace_id: fpTrace, span_id: fpSpan })
          : [];
        const movedTo = toBigIntOrNull(moved?.rowid);
        if (movedTo !== null) {
          const [next] = await store.rollup.query<Row>(NEXT_ROWID_SQL, { last_rowid: movedTo });
          const maxRowid = toBigIntOrNull(next?.max_rowid) ?? movedTo;
          const hiRowid = maxRowid < movedTo + MAX_SPANS_PER_RUN ? maxRowid : movedTo + MAX_SPANS_PER_RUN;
          return { mode: 'incremental', loRowid: movedTo, hiRowid, maxRowid, minStartNs: INT64_MIN };
        }
        // That span was deleted too: recompute the recent past by event time.
        const [all] = await store.rollup.query<Row>('SELECT max(rowid) AS max_rowid FROM span_store');
        const maxRowid = toBigIntOrNull(all?.max_rowid) ?? -1n;
        const newest = toBigIntOrNull(state.newest_span_end_ns) ?? 0n;
        return {
          mode: 'catch-up',
          loRowid: -1n,
          hiRowid: maxRowid,
          maxRowid,
          minStartNs: newest - CATCH_UP_HORIZON_NS,
        };
      }
    }
    const [next] = await store.rollup.query<Row>(NEXT_ROWID_SQL, { last_rowid: lastRowid });
    const maxRowid = toBigIntOrNull(next?.max_rowid);
    if (maxRowid === null) return null;
    const hiRowid = maxRowid < lastRowid + MAX_SPANS_PER_RUN ? maxRowid : lastRowid + MAX_SPANS_PER_RUN;
    return { mode: 'incremental', loRowid: lastRowid, hiRowid, maxRowid, minStartNs: INT64_MIN };
  };

  /**
   * Rows of request_facts ending at or after loEndNs, by trace key or task key (literal lists; an
   * empty list matches nothing).
   */
  const queryKnownFacts = (traceKeys: string[], taskKeys: string[], loEndNs: bigint) =>
    timed('known_facts', () =>
      store.rollup.query<Row>(
        KNOWN_FACTS_SQL.replace('{{trace_keys}}', traceKeys.length > 0 ? traceKeys.join(',') : 'NULL')
          .replace('{{task_keys}}', taskKeys.length > 0 ? taskKeys.join(',') : 'NULL')
          .replace('{{lo_end_ns}}', String(loEndNs)),
      ),
    );

  const applyBatch = async (batch: Batch): Promise<{ traces: number }> => {
    const range = { lo_rowid: batch.loRowid, hi_rowid: batch.hiRowid, min_start_ns: batch.minStartNs };
    const [summary = {}] = await timed('plan', () => store.rollup.query<Row>(PLAN_NEW_SPANS_SQL, range));
    const traces = toNumberOrNull(summary.traces) ?? 0;
    let loNs = toBigIntOrNull(summary.lo_ns);
    let hiNs = toBigIntOrNull(summary.hi_ns);
    const maxEndNs = toBigIntOrNull(summary.max_end_ns);
    // Earlier rows are looked up from here back (reachBack).
    const horizonNs = (loNs ?? 0n) - settings.taskIdleNs;
    const fill: Record<string, string> = {
      task_idle_ns: String(settings.taskIdleNs),
      lo_rowid: String(batch.loRowid),
      hi_rowid: String(batch.hiRowid),
      min_start_ns: String(batch.minStartNs),
      max_end_ns: maxEndNs === null ? 'NULL' : String(maxEndNs),
      mode: batch.mode,
      spans_remaining: String(batch.maxRowid - batch.hiRowid),
    };
    if (traces === 0 || loNs === null || hiNs === null) {
      // Nothing to recompute (e.g. rows of another writer's failed transaction): record progress.
      Object.assign(fill, {
        earlier_traces: NO_TRACES,
        earlier_lo_ns: '0',
        earlier_hi_ns: '-1',
        lo_ns: '0',
        hi_ns: '-1',
        trace_key_filter: 'false',
        task_key_filter: 'false',
        old_lo_end_ns: '0',
        old_hi_end_ns: '-1',
      });
    } else if (traces <= MAX_LITERAL_TRACES) {
      const rows = await timed('plan', () => store.rollup.query<Row>(PLAN_NEW_TRACES_SQL, range));
      // Known rows are matched to the touched traces by key: a key two trace ids share would only add
      // a trace to re-read (apply-refresh.sql checks trace ids), never drop one.
      const idByKey = new Map<string, string>();
      const taskKeys = new Set<string>();
      for (const r of rows) {
        const id = String(r.trace_id);
        if (!TRACE_ID.test(id)) throw new Error(`span_store holds a malformed trace id "${id}"`);
        idByKey.set(integerLiteral(r.trace_key), id);
        for (const k of (r.task_keys as unknown[]) ?? []) taskKeys.add(integerLiteral(k));
        const lo = toBigIntOrNull(r.lo_ns);
        const hi = toBigIntOrNull(r.hi_ns);
        if (lo !== null && lo < loNs) loNs = lo;
        if (hi !== null && hi > hiNs) hiNs = hi;
      }
      const traceKeys = [...idByKey.keys()];
      const newTaskKeys = new Set(taskKeys);
      // A touched trace may have belonged to another task before (a late span named its workflow):
      // that task's other requests need their task columns recomputed too.
      const formerTasksOf = (rows: Row[]) =>
        new Set(
          rows
            .filter((f) => idByKey.has(integerLiteral(f.trace_key)))
            .map((f) => integerLiteral(f.task_key))
            .filter((k) => !newTaskKeys.has(k)),
        );
      const known = await reachBack(horizonNs, async (loEndNs) => {
        const rows = await queryKnownFacts(traceKeys, [...newTaskKeys], loEndNs);
        const formerTasks = [...formerTasksOf(rows)];
        if (formerTasks.length > 0) rows.push(...(await queryKnownFacts([], formerTasks, loEndNs)));
        return rows;
      });
      for (const k of formerTasksOf(known)) taskKeys.add(k);
      let oldLoEnd: bigint | null = null;
      let oldHiEnd: bigint | null = null;
      // The touched traces an earlier refresh saw: only they have earlier spans, in this range.
      const earlier: string[] = [];
      let earlierLo: bigint | null = null;
      let earlierHi: bigint | null = null;
      for (const f of known) {
        const end = toBigIntOrNull(f.end_ns);
        if (end !== null && (oldLoEnd === null || end < oldLoEnd)) oldLoEnd = end;
        if (end !== null && (oldHiEnd === null || end > oldHiEnd)) oldHiEnd = end;
        const id = idByKey.get(integerLiteral(f.trace_key));
        if (id === undefined) continue;
        earlier.push(`'${id}'`);
        const lo = toBigIntOrNull(f.first_span_ns);
        const hi = toBigIntOrNull(f.last_span_ns);
        if (lo !== null && (earlierLo === null || lo < earlierLo)) earlierLo = lo;
        if (hi !== null && (earlierHi === null || hi > earlierHi)) earlierHi = hi;
      }
      if (earlierLo !== null && earlierLo < loNs) loNs = earlierLo;
      if (earlierHi !== null && earlierHi > hiNs) hiNs = earlierHi;
      Object.assign(fill, {
        // Trace ids checked against TRACE_ID above (they are touched ids).
        earlier_traces: earlier.length > 0 ? earlier.join(',') : NO_TRACES,
        earlier_lo_ns: String(earlierLo ?? 0n),
        earlier_hi_ns: String(earlierHi ?? -1n),
        trace_key_filter: `trace_key IN (${traceKeys.join(',')})`,
        task_key_filter: `task_key IN (${[...taskKeys].join(',')})`,
        // Earlier rows lie in this end_ns range (an empty range when there are none).
        old_lo_end_ns: String(oldLoEnd ?? 0n),
        old_hi_end_ns: String(oldHiEnd ?? -1n),
      });
    } else {
      const [known = {}] = await reachBack(horizonNs, (loEndNs) =>
        timed('known_facts', () =>
          store.rollup.query<Row>(PLAN_BULK_RANGE_SQL, { ...range, lo_end_ns: loEndNs }),
        ),
      );
      const lo = toBigIntOrNull(known.lo_ns);
      const hi = toBigIntOrNull(known.hi_ns);
      if (lo !== null && lo < loNs) loNs = lo;
      if (hi !== null && hi > hiNs) hiNs = hi;
      // Earlier rows lie in this end_ns range (an empty range when there are none): every scan of
      // request_facts below is bounded by it, as the literal lists' are.
      const oldLoEnd = String(toBigIntOrNull(known.old_lo_end_ns) ?? 0n);
      const oldHiEnd = String(toBigIntOrNull(known.old_hi_end_ns) ?? -1n);
      const earlierRows = `rollup.main.request_facts WHERE end_ns >= ${oldLoEnd} AND end_ns <= ${oldHiEnd} AND trace_key IN (SELECT (hash(trace_id) >> 1)::BIGINT FROM sig_traces)`;
      Object.assign(fill, {
        earlier_traces: `SELECT trace_id FROM ${earlierRows} AND trace_id IN (SELECT trace_id FROM sig_traces)`,
        earlier_lo_ns: String(lo ?? 0n),
        earlier_hi_ns: String(hi ?? -1n),
        trace_key_filter: 'trace_key IN (SELECT (hash(trace_id) >> 1)::BIGINT FROM sig_traces)',
        // The touched traces' tasks now, and the tasks they belonged to before.
        task_key_filter: `task_key IN (SELECT task_key FROM sig_trace_facts UNION SELECT task_key FROM ${earlierRows})`,
        old_lo_end_ns: oldLoEnd,
        old_hi_end_ns: oldHiEnd,
      });
    }
    Object.assign(fill, { lo_ns: fill.lo_ns ?? String(loNs), hi_ns: fill.hi_ns ?? String(hiNs) });
    const filled = (sql: string) =>
      sql.replace(/\{\{(\w+)\}\}/g, (_m, name: string) => {
        const value = fill[name];
        if (value === undefined) throw new Error(`apply-refresh.sql: no value for {{${name}}}`);
        return value;
      });
    try {
      for (const statement of APPLY_STATEMENTS) {
        const sql = filled(statement.sql);
        await timed(statement.step, () => store.rollup.execute(sql));
      }
    } catch (error) {
      // A failed statement leaves the script's transaction open; close it for the connection's next user.
      await store.rollup.execute('ROLLBACK').catch(() => undefined);
      throw new Error(`refreshing request_facts failed: ${(error as Error).message}`, { cause: error });
    }
    return { traces };
  };

  // The rollup's database file (rollup-database.ts in @governor/store) has no automatic checkpoint
  // (checkpoint_threshold is set past reach for the main file's sake), and only the refresh and
  // retention write it: the refresh checkpoints it between runs, where its own commits are the only
  // ones a checkpoint holds up. A checkpoint refused while retention writes is retried next run.
  let rollupRowsSinceCheckpoint = 0;
  let rollupCheckpointedAt = performance.now();
  const checkpointRollupIfDue = async (rows: number) => {
    rollupRowsSinceCheckpoint += rows;
    const due =
      rollupRowsSinceCheckpoint >= ROLLUP_CHECKPOINT_ROWS ||
      (rollupRowsSinceCheckpoint > 0 && performance.now() - rollupCheckpointedAt >= ROLLUP_CHECKPOINT_MS);
    if (!due) return;
    try {
      await timed('checkpoint', () => store.rollup.execute('CHECKPOINT rollup'));
      rollupRowsSinceCheckpoint = 0;
      rollupCheckpointedAt = performance.now();
    } catch {
      // Another write transaction on the rollup file (retention's export): the next run retries.
    }
  };

  const runOnce = async (): Promise<RefreshResult> => {
    const started = performance.now();
    const startedAtMs = Date.now();
    // Spans acknowledged during a checkpoint sit in the ingest stage, not yet in span_store where
    // this reads them by rowid: wait for the move, so an acknowledged span is in the next read.
    await store.writer.whenMoved();
    const workStarted = performance.now();
    const result: RefreshResult = {
      runs: 0,
      tracesTouched: 0,
      requestsWritten: 0,
      caughtUp: false,
      elapsedMs: 0,
    };
    const written = writtenSoFar();
    for (;;) {
      // A checkpoint between finding a batch by rowid and applying it would renumber the rows
      // (after retention's deletes) and the apply would read others: none starts meanwhile.
      const batch = await store.writer.holdRowids(async () => {
        const found = await nextBatch();
        if (!found) return null;
        const applied = await applyBatch(found);
        const [state = {}] = await store.rollup.query<Row>(STATE_SQL);
        result.runs++;
        result.tracesTouched += applied.traces;
        result.requestsWritten += toNumberOrNull(state.last_requests_written) ?? 0;
        result.caughtUp ||= found.mode === 'catch-up';
        return found;
      });
      if (!batch || batch.hiRowid >= batch.maxRowid) break;
    }
    writtenAtLastRun = written;
    await checkpointRollupIfDue(result.requestsWritten);
    // Timed from after the wait for staged rows (a checkpoint's stall is not the refresh's speed);
    // a checkpoint met between two batches counts, which errs towards a slower rollup.
    if (written > coveredWritten)
      runCost.observe(written - coveredWritten, Math.max(1, performance.now() - workStarted), Date.now());
    // Every span counted in `written` (read after the move, before the batches) is in the rollup now.
    currentAtMs = startedAtMs;
    coveredWritten = written;
    result.elapsedMs = performance.now() - started;
    return result;
  };

  const refresh = (): Promise<RefreshResult> => {
    if (running === null) {
      running = runOnce()
        .then(
          (result) => {
            lastRunFailed = false;
            return result;
          },
          (error: unknown) => {
            lastRunFailed = true;
            throw error;
          },
        )
        .finally(() => {
          running = null;
        });
      return running;
    }
    // The run in progress may have started before the caller's data was committed: every caller
    // arriving now shares one more run after it.
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return refresh();
      });
    return queued;
  };

  return {
    refresh,
    async ensureFresh() {
      await store.writer.whenMoved();
      if (running === null && queued === null && writtenAtLastRun === writtenSoFar()) return null;
      return refresh();
    },
    stepSeconds() {
      return Object.fromEntries(REFRESH_STEPS.map((step) => [step, stepMs[step] / 1000])) as Record<
        RefreshStep,
        number
      >;
    },
    lag() {
      // Spans parked in the ingest stage during a checkpoint count too: acknowledged, not rolled up.
      const w = store.writer.stats();
      const waiting = w.spansWritten + w.stagedSpans - coveredWritten;
      const ms = waiting > 0 ? Math.max(0, Date.now() - currentAtMs) : 0;
      const catchUpMs = waiting <= 0 ? 0 : (runCost.predictMs(waiting) ?? ms);
      return { ms, catchUpMs, failing: lastRunFailed };
    },
    async newestSpanEndNs() {
      const [state] = await store.query<Row>(STATE_SQL);
      return toBigIntOrNull(state?.newest_span_end_ns);
    },
  };
}

/** A DuckDB integer as SQL literal text (store.query returns big ones as decimal strings). */
function integerLiteral(value: unknown): string {
  const n = toBigIntOrNull(value);
  if (n === null) throw new Error(`expected an integer key, got ${String(value)}`);
  return n.toString();
}
