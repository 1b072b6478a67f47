-- The requests each pool served whose trace ended in (from_ns, at_ns], the newest $max_per_pool of
-- them (a contiguous stretch, so the replay sees every arrival in it): when each reached the pool's
-- queue, its TTFT, its end-to-end latency, the queue wait it measured, its uncached prompt tokens
-- and its task. The control loop's pool model replays them on other replica counts
-- (packages/control/src/model/predict-pool.ts).
--
-- Both orders are total over what the replay reads: requests that reach a queue at the same instant
-- are served in the order of their other columns, never in the order the rows happen to be stored
-- (which follows the trace ids), so the same telemetry replays the same under other ids.
WITH requests AS (
  SELECT
    pool,
    start_ns,
    -- TTFT is what came before the queue (gateway, router, cache), then queueing, then prefill.
    start_ns + CAST(round(greatest(0, ttft_ms - coalesce(ttft_hop_queue_ms, 0) - ttft_hop_prefill_ms) * 1e6) AS BIGINT) AS arrive_ns,
    ttft_ms,
    e2e_ms,
    ttft_hop_queue_ms AS queue_ms,
    task_key,
    greatest(input_tokens - coalesce(cached_tokens, 0), 1) AS uncached_tokens
  FROM request_facts
  WHERE pool IS NOT NULL
    AND ttft_ms IS NOT NULL
    AND ttft_hop_prefill_ms IS NOT NULL
    AND input_tokens IS NOT NULL
    AND end_ns > $from_ns
    AND end_ns <= $at_ns
)
SELECT pool, arrive_ns, ttft_ms, e2e_ms, queue_ms, task_key, uncached_tokens
FROM (
  SELECT
    *,
    row_number() OVER (
      PARTITION BY pool ORDER BY start_ns DESC, arrive_ns DESC, uncached_tokens DESC, ttft_ms DESC, e2e_ms DESC, queue_ms DESC
    ) AS newest
  FROM requests
)
WHERE newest <= $max_per_pool
ORDER BY pool, arrive_ns, uncached_tokens, ttft_ms, e2e_ms, queue_ms
