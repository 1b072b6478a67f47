import type { Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import { toBigIntOrNull, toNumberOrNull } from '../sql-params.ts';

// Incremental maintenance of request_facts (one row per trace, see trace-facts.sql). A refresh
// reads the spans appended since the previous one, recomputes the traces they belong to and the
// task columns of their tasks. It is cheap when little was written, so every reader calls
// ensureFresh() first and a background timer keeps the lag small.

const REFRESH_SQL = loadSql(import.meta.url, 'refresh-request-facts.sql');
const CATCH_UP_SQL = loadSql(import.meta.url, 'catch-up-request-facts.sql');
const STATE_SQL = 'SELECT * FROM request_facts_state WHERE id = 1';
const FINGERPRINT_SQL = loadSql(import.meta.url, 'check-fingerprint.sql');

export interface RefreshResult {
  /** Runs of the refresh script (each reads at most 2M new spans). */
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
}

const refreshers = new WeakMap<Store, FactsRefresher>();

/** One refresher per store, shared by every Signals instance over it (alerts, control, the API). */
export function getFactsRefresher(store: Store): FactsRefresher {
  let refresher = refreshers.get(store);
  if (!refresher) {
    refresher = createFactsRefresher(store);
    refreshers.set(store, refresher);
  }
  return refresher;
}

function createFactsRefresher(store: Store): FactsRefresher {
  let running: Promise<RefreshResult> | null = null;
  let queued: Promise<RefreshResult> | null = null;
  let writtenAtLastRun = -1;
  const writtenSoFar = () => store.writer.stats().spansWritten;

  const rowidsMoved = async (): Promise<boolean> => {
    const [state] = await store.query<Record<string, unknown>>(STATE_SQL);
    const lastRowid = toBigIntOrNull(state?.last_rowid) ?? -1n;
    if (lastRowid < 0n || typeof state?.fp_trace_id !== 'string' || typeof state.fp_span_id !== 'string') return false;
    const [row] = await store.query<{ n: number }>(FINGERPRINT_SQL, {
      last_rowid: lastRowid,
      fp_trace_id: state.fp_trace_id,
      fp_span_id: state.fp_span_id,
    });
    return (row?.n ?? 0) === 0;
  };

  const runScript = async (sql: string) => {
    try {
      await store.execute(sql);
    } catch (error) {
      // A failed statement leaves the script's transaction open; close it for the connection's next user.
      await store.execute('ROLLBACK').catch(() => undefined);
      throw new Error(`refreshing request_facts failed: ${(error as Error).message}`, { cause: error });
    }
    const [state] = await store.query<Record<string, unknown>>(STATE_SQL);
    return state ?? {};
  };

  const runOnce = async (): Promise<RefreshResult> => {
    const started = performance.now();
    const result: RefreshResult = { runs: 0, tracesTouched: 0, requestsWritten: 0, caughtUp: false, elapsedMs: 0 };
    const written = writtenSoFar();
    let script = (await rowidsMoved()) ? CATCH_UP_SQL : REFRESH_SQL;
    for (;;) {
      const state = await runScript(script);
      result.runs++;
      result.tracesTouched += toNumberOrNull(state.last_traces_touched) ?? 0;
      result.requestsWritten += toNumberOrNull(state.last_requests_written) ?? 0;
      result.caughtUp ||= state.last_mode === 'catch-up';
      script = REFRESH_SQL;
      if ((toNumberOrNull(state.spans_remaining) ?? 0) <= 0) break;
    }
    writtenAtLastRun = written;
    result.elapsedMs = performance.now() - started;
    return result;
  };

  const refresh = (): Promise<RefreshResult> => {
    if (running === null) {
      running = runOnce().finally(() => {
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
      if (running === null && queued === null && writtenAtLastRun === writtenSoFar()) return null;
      return refresh();
    },
    async newestSpanEndNs() {
      const [state] = await store.query<Record<string, unknown>>(STATE_SQL);
      return toBigIntOrNull(state?.newest_span_end_ns);
    },
  };
}
