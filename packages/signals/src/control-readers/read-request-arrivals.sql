-- The requests each pool served whose trace ended in (from_ns, at_ns], the newest $max_per_pool of
-- them (a contiguous stretch, so the replay sees every arrival in it): when each reached the pool's
-- queue, its TTFT, its end-to-end latency, the queue wait it measured, its uncached prompt tokens
-- and the prompt tokens it found in the prefix cache,
-- the KV cache it held by its end (prompt and output tokens) and for how long (from its admission,
-- when prefill began, to its end), its task and its attempt (1, or a retry's number). The control
-- loop's pool model replays them on other replica counts (packages/control/src/model/predict-pool.ts).
-- With each comes its deadline where the gateway
-- recorded one: the `x-envoy-expected-rq-timeout-ms` header Envoy's router sets on the upstream
-- request (ms; a string array as HTTP semconv captures a header, or a string as Envoy's custom tags
-- do).
--
-- Both orders are total over what the replay reads: requests that reach a queue at the same instant
-- are served in the order of their other columns, never in the order the rows happen to be stored
-- (which follows the trace ids), so the same telemetry replays the same under other ids.
WITH requests AS (
  SELECT
    pool,
    trace_id,
    start_ns,
    -- TTFT is what came before the queue (gateway, router, cache), then queueing, then prefill.
    start_ns + CAST(round(greatest(0, ttft_ms - coalesce(ttft_hop_queue_ms, 0) - ttft_hop_prefill_ms) * 1e6) AS BIGINT) AS arrive_ns,
    ttft_ms,
    e2e_ms,
    ttft_hop_queue_ms AS queue_ms,
    task_key,
    attempt,
    greatest(input_tokens - coalesce(cached_tokens, 0), 1) AS uncached_tokens,
    cached_tokens,
    input_tokens + coalesce(output_tokens, 0) AS kv_tokens,
    greatest(0, e2e_ms - ttft_ms + ttft_hop_prefill_ms) AS hold_ms
  FROM request_facts
  WHERE pool IS NOT NULL
    AND ttft_ms IS NOT NULL
    AND ttft_hop_prefill_ms IS NOT NULL
    AND input_tokens IS NOT NULL
    AND end_ns > $from_ns
    AND end_ns <= $at_ns
),
chosen AS (
  SELECT *
  FROM (
    SELECT
      *,
      row_number() OVER (
        PARTITION BY pool ORDER BY start_ns DESC, arrive_ns DESC, uncached_tokens DESC, ttft_ms DESC, e2e_ms DESC, queue_ms DESC
      ) AS newest
    FROM requests
  )
  WHERE newest <= $max_per_pool
),
-- The deadline a span of the chosen request's trace carries (the gateway's span of the upstream
-- call): a span starts no earlier than its trace's root, and only those traces are read.
deadlines AS (
  SELECT
    trace_id,
    min(coalesce(
      TRY_CAST(json_extract_string(attributes, '$."http.request.header.x-envoy-expected-rq-timeout-ms"[0]') AS DOUBLE),
      TRY_CAST(json_extract_string(attributes, '$."http.request.header.x-envoy-expected-rq-timeout-ms"') AS DOUBLE)
    )) AS deadline_ms
  FROM spans
  WHERE start_ns >= (SELECT min(start_ns) FROM chosen)
    AND start_ns <= $at_ns
    -- A substring test first: far cheaper than reading the JSON of every span.
    AND contains(CAST(attributes AS VARCHAR), 'x-envoy-expected-rq-timeout-ms')
    AND trace_id IN (SELECT trace_id FROM chosen)
  GROUP BY trace_id
)
SELECT c.pool, c.arrive_ns, c.ttft_ms, c.e2e_ms, c.queue_ms, c.task_key, c.attempt, c.uncached_tokens,
  c.cached_tokens, c.kv_tokens, c.hold_ms, d.deadline_ms
FROM chosen c
LEFT JOIN deadlines d USING (trace_id)
ORDER BY c.pool, c.arrive_ns, c.uncached_tokens, c.ttft_ms, c.e2e_ms, c.queue_ms
