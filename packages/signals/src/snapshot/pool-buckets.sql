-- Per (bucket, pool): what the pool served (all requests in the window, no filter), its
-- replica-time from the replicas gauge, and its KV-cache usage and queue depth from vLLM's gauges.
-- Cost, utilization and allocation are computed from these rows in allocate-cost.ts.
WITH
-- @include windowed-requests.sql
,
-- @include replica-gauge.sql
,
pool_usage AS (
  SELECT
    bucket,
    pool,
    count(*) AS requests,
    sum(gpu_ms) AS gpu_ms,
    sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
    sum(output_tokens) AS output_tokens,
    sum(cost_usd) AS explicit_cost_usd,
    count(DISTINCT replica) AS span_replicas,
    any_value(model) AS model,
    any_value(region) AS region,
    any_value(gpu_type) AS gpu_type,
    avg(kv_usage) AS span_kv_usage,
    avg(queue_depth) AS span_queue_depth
  FROM win_requests
  GROUP BY bucket, pool
),
kv_gauge AS (
  SELECT (time_ns - $from_ns::BIGINT - 1) // $step_ns::BIGINT AS bucket, pool, avg(value) AS kv_usage
  FROM metric_points
  WHERE name = 'vllm:kv_cache_usage_perc' AND pool IS NOT NULL AND value IS NOT NULL
    AND time_ns > $from_ns::BIGINT AND time_ns <= $to_ns::BIGINT
  GROUP BY ALL
),
queue_series AS (
  SELECT
    (time_ns - $from_ns::BIGINT - 1) // $step_ns::BIGINT AS bucket,
    pool,
    coalesce(replica, '') || '|' || coalesce(service, '') || '|' || coalesce(attributes::VARCHAR, '') AS series,
    avg(value) AS waiting
  FROM metric_points
  WHERE name = 'vllm:num_requests_waiting' AND pool IS NOT NULL AND value IS NOT NULL
    AND time_ns > $from_ns::BIGINT AND time_ns <= $to_ns::BIGINT
  GROUP BY ALL
),
queue_gauge AS (
  SELECT bucket, pool, sum(waiting) AS queue_depth FROM queue_series GROUP BY ALL
),
keys AS (
  SELECT bucket, pool FROM pool_usage
  UNION SELECT bucket, pool FROM replica_time
  UNION SELECT bucket, pool FROM kv_gauge
  UNION SELECT bucket, pool FROM queue_gauge
)
SELECT
  k.bucket,
  k.pool,
  coalesce(u.requests, 0) AS requests,
  u.gpu_ms,
  coalesce(u.tokens, 0) AS tokens,
  u.output_tokens,
  u.explicit_cost_usd,
  coalesce(u.span_replicas, 0) AS span_replicas,
  rt.replica_ns,
  rt.covered_ns,
  coalesce(c.model, u.model) AS model,
  coalesce(c.region, u.region) AS region,
  coalesce(c.gpu_type, u.gpu_type) AS gpu_type,
  c.gpus_per_replica,
  c.peak_tokens_per_s,
  coalesce(kv.kv_usage, u.span_kv_usage) AS kv_usage,
  coalesce(q.queue_depth, u.span_queue_depth) AS queue_depth
FROM keys k
LEFT JOIN pool_usage u ON u.bucket = k.bucket AND u.pool IS NOT DISTINCT FROM k.pool
LEFT JOIN replica_time rt ON rt.bucket = k.bucket AND rt.pool = k.pool
LEFT JOIN kv_gauge kv ON kv.bucket = k.bucket AND kv.pool = k.pool
LEFT JOIN queue_gauge q ON q.bucket = k.bucket AND q.pool = k.pool
LEFT JOIN cfg_pools c ON c.name = k.pool
