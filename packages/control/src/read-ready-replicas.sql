-- Replicas serving per pool at $at_ns: distinct replicas reporting a runtime gauge in the newest
-- sample of each pool within the lookback. Starting replicas report no runtime gauges.
WITH recent AS (
  SELECT pool, replica, time_ns
  FROM metric_points
  WHERE name IN ('vllm:num_requests_running', 'vllm:kv_cache_usage_perc')
    AND time_ns > $from_ns AND time_ns <= $at_ns
    AND pool IS NOT NULL AND replica IS NOT NULL
),
newest AS (
  SELECT pool, max(time_ns) AS time_ns FROM recent GROUP BY pool
)
SELECT r.pool, count(DISTINCT r.replica) AS ready
FROM recent r JOIN newest n ON r.pool = n.pool AND r.time_ns = n.time_ns
GROUP BY r.pool
