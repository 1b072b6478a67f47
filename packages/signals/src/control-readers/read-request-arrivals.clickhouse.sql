-- read-request-arrivals.sql for ClickHouse (18.16 and later): the same requests per pool, in the same
-- orders (that file states them). What differs:
-- - request_facts FINAL … deleted = 0: the current version of each request (the nodes' rollups write
--   a request again as a new version, and a tombstone for a row a trace no longer has).
-- - The newest $max_per_pool per pool by ORDER BY … LIMIT … BY pool instead of row_number() (18.16
--   has no window functions), in the same total order; then the same final order.
-- - The arrival offset is rounded half away from zero as DuckDB's round() does, spelled out with
--   floor(): ClickHouse's round() of a float may break a tie to even (current releases' banker's
--   rounding).
-- - No CTE on 18.16 (nested subqueries); no alias repeats a column's name (18.16 would read the alias
--   in WHERE); DESC puts NULL last on both engines, as DuckDB does.
-- - The deadline comes through one GLOBAL ANY LEFT JOIN on the trace's spans (span_store is
--   Distributed; FINAL counts a span sent twice once), its header read raw with visitParamExtractRaw
--   (18.16 has no JSON paths) and stripped of the array's brackets and quotes. The caller sets
--   join_use_nulls = 1, so a request without the header reads NULL, as in DuckDB.
SELECT pool, arrive_ns, ttft_ms, e2e_ms, queue_ms, task_key, attempt, uncached_tokens, cached_tokens, kv_tokens, hold_ms, deadline_ms
FROM (
  SELECT pool, trace_id, arrive_ns, ttft_ms, e2e_ms, queue_ms, task_key, attempt, uncached_tokens, cached_tokens, kv_tokens, hold_ms
  FROM (
    SELECT
      pool,
      trace_id,
      start_ns,
      -- TTFT is what came before the queue (gateway, router, cache), then queueing, then prefill.
      greatest(0, assumeNotNull(ttft_ms) - ifNull(ttft_hop_queue_ms, 0) - assumeNotNull(ttft_hop_prefill_ms)) * 1e6
        AS arrive_offset,
      start_ns + toInt64(floor(arrive_offset)) + toInt64(arrive_offset - floor(arrive_offset) >= 0.5) AS arrive_ns,
      ttft_ms,
      e2e_ms,
      ttft_hop_queue_ms AS queue_ms,
      task_key,
      attempt,
      greatest(assumeNotNull(input_tokens) - ifNull(cached_tokens, 0), 1) AS uncached_tokens,
      cached_tokens,
      assumeNotNull(input_tokens) + ifNull(output_tokens, 0) AS kv_tokens,
      greatest(0, e2e_ms - assumeNotNull(ttft_ms) + assumeNotNull(ttft_hop_prefill_ms)) AS hold_ms
    FROM {{database}}.request_facts FINAL
    WHERE deleted = 0
      AND pool IS NOT NULL
      AND ttft_ms IS NOT NULL
      AND ttft_hop_prefill_ms IS NOT NULL
      AND input_tokens IS NOT NULL
      AND end_ns > $from_ns
      AND end_ns <= $at_ns
      AND start_ns >= $facts_from_ns
      AND intDiv(start_ns, 60000000000) BETWEEN intDiv($facts_from_ns, 60000000000) AND intDiv($at_ns, 60000000000)
  )
  ORDER BY pool, start_ns DESC, arrive_ns DESC, uncached_tokens DESC, ttft_ms DESC, e2e_ms DESC, queue_ms DESC
  LIMIT $max_per_pool BY pool
)
GLOBAL ANY LEFT JOIN (
  SELECT
    trace_id,
    min(toFloat64OrNull(replaceRegexpAll(
      visitParamExtractRaw(ifNull(attributes, ''), 'http.request.header.x-envoy-expected-rq-timeout-ms'),
      '[\\[\\]" ]', ''))) AS deadline_ms
  FROM {{database}}.span_store FINAL
  WHERE start_ns >= $facts_from_ns
    AND start_ns <= $at_ns
    AND position(ifNull(attributes, ''), 'x-envoy-expected-rq-timeout-ms') > 0
  GROUP BY trace_id
) USING (trace_id)
ORDER BY pool, arrive_ns, uncached_tokens, ttft_ms, e2e_ms, queue_ms
