import type { ClickHouseReader, Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';
import { getFactsRefresher } from '../rollup/refresh-request-facts.ts';
import { waitForRollups } from '../rollup/wait-for-rollups.ts';

const SQL = loadSql(import.meta.url, 'read-request-arrivals.sql');
const CLICKHOUSE_SQL = loadSql(import.meta.url, 'read-request-arrivals.clickhouse.sql');

/** One request as it met a pool (see read-request-arrivals.sql). */
export interface RequestArrival {
  /**
   * When it reached the pool's queue, in ms since the start of the window read (`atNs − windowMs`;
   * negative for a request that reached it earlier and ended within the window), so the times of
   * the control loop's own actions fall on the same axis.
   */
  arriveMs: number;
  ttftMs: number;
  /** Its end-to-end latency (ms); absent where a producer does not give it (then e2e is not judged). */
  e2eMs?: number;
  /** The wait it measured before its prefill started (ms); absent when its spans do not say. */
  queueMs?: number;
  /**
   * Its task (workflow, conversation, or the request alone), as the index in its pool's list of the
   * task's first request there: requests with the same index belong to one task. An index, not an id,
   * so the same telemetry under other ids reads the same.
   */
  task?: number;
  /**
   * 1 for a first attempt, n for its (n − 1)th retry (`governor.attempt`, else
   * `http.request.resend_count` + 1, else the OpenAI SDK's `x-stainless-retry-count` + 1: docs/sql.md).
   * Absent reads as a first attempt.
   */
  attempt?: number;
  uncachedTokens: number;
  /**
   * Prompt tokens it found in the prefix cache (vLLM's automatic prefix caching: no prefill for them);
   * absent where its spans do not say. A replica that no longer holds the prefix prefills them too.
   */
  cachedTokens?: number;
  /**
   * The KV cache it held by its end, in tokens: its prompt (cached or not: the cache holds every
   * token's keys and values) and its output. Absent when its spans do not give the token counts.
   */
  kvTokens?: number;
  /** How long it held that KV (ms): from its admission (prefill began) to its end. */
  holdMs?: number;
  /**
   * Its deadline (ms) where the gateway recorded one (Envoy's `x-envoy-expected-rq-timeout-ms` on
   * the upstream request): past it the gateway answers 504 and the request fails. Absent when not known.
   */
  deadlineMs?: number;
}

export type RequestArrivalsReader = (
  atNs: bigint,
  windowMs: number,
) => Promise<Map<string, RequestArrival[]>>;

/**
 * Enough consecutive requests to see a pool's queue, few enough that a busy pool's replay stays
 * cheap: at 10 requests/s per pool this is the last 5 minutes.
 */
export const MAX_ARRIVALS_PER_POOL = 3000;

/**
 * Per pool, its requests over the window ending at `atNs`, in arrival order. They come from the
 * request rollup (request_facts). On DuckDB a read first waits for it to take in every span
 * acknowledged so far, as the signal snapshots do (waitForRollups): a control tick then replays the
 * same requests the snapshots of the same tick counted, whatever the timing of the rollup's refresh.
 * That needs the DuckDB `Store` itself (its refresher and the rollup's stop signal), not only a
 * reader. On ClickHouse request_facts is kept by every node's rollup loop, and a read waits for none
 * of them (the other nodes' loops are out of reach), as the signals' reads there do not wait either
 * (createSignals over a ClickHouse source): it reads what the nodes have rolled up so far.
 */
export function createRequestArrivalsReader(
  db: Store | ClickHouseReader,
  maxPerPool = MAX_ARRIVALS_PER_POOL,
): RequestArrivalsReader {
  const refresher = db.engine === 'duckdb' ? getFactsRefresher(db) : null;
  const sql = db.engine === 'clickhouse' ? CLICKHOUSE_SQL : SQL;
  return async (atNs, windowMs) => {
    if (refresher && db.engine === 'duckdb')
      await waitForRollups(refresher, db.readDeadlineMs, db.rollup.stopSignal);
    const rows = await db.query<{
      pool: string;
      arrive_ns: bigint;
      ttft_ms: number;
      e2e_ms: number;
      queue_ms: number | null;
      task_key: bigint;
      attempt: number;
      uncached_tokens: number;
      cached_tokens: number | null;
      kv_tokens: number | null;
      hold_ms: number | null;
      deadline_ms?: number | null;
    }>(
      sql,
      {
        from_ns: atNs - BigInt(Math.round(windowMs)) * 1_000_000n,
        at_ns: atNs,
        max_per_pool: maxPerPool,
      },
      ...(db.engine === 'clickhouse' ? [{ join_use_nulls: 1 }] : []),
    );
    const out = new Map<string, RequestArrival[]>();
    const origin = atNs - BigInt(Math.round(windowMs)) * 1_000_000n;
    const taskIndex = new Map<string, number>();
    for (const r of rows) {
      const arriveNs = BigInt(r.arrive_ns);
      const list = out.get(r.pool) ?? [];
      out.set(r.pool, list);
      const taskId = `${r.pool}\u0000${String(r.task_key)}`;
      const task = taskIndex.get(taskId) ?? list.length;
      taskIndex.set(taskId, task);
      list.push({
        arriveMs: Number(arriveNs - origin) / 1e6,
        ttftMs: Number(r.ttft_ms),
        e2eMs: Number(r.e2e_ms),
        ...(r.queue_ms === null ? {} : { queueMs: Number(r.queue_ms) }),
        task,
        attempt: Number(r.attempt),
        uncachedTokens: Number(r.uncached_tokens),
        ...(r.cached_tokens === null ? {} : { cachedTokens: Number(r.cached_tokens) }),
        ...(r.kv_tokens === null || r.hold_ms === null
          ? {}
          : { kvTokens: Number(r.kv_tokens), holdMs: Number(r.hold_ms) }),
        ...(r.deadline_ms != null && Number(r.deadline_ms) > 0 ? { deadlineMs: Number(r.deadline_ms) } : {}),
      });
    }
    return out;
  };
}
