-- Per (bucket, pool): what the pool served — every request that ended in the bucket, no filter.
-- The same sums as request-aggregates.sql adds up per pool (keep the two in step); this narrow
-- version serves callers that need only pool costs, such as the cost share of listed tasks.
SELECT
  bucket,
  pool,
  sum(w) AS requests,
  sum((coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) * w) AS tokens,
  sum(output_tokens * w) AS output_tokens,
  sum(gpu_ms * w) AS gpu_ms,
  sum(cost_usd * w) AS explicit_cost_usd,
  sum(kv_usage) AS kv_usage_sum,
  count(kv_usage) AS kv_usage_n,
  sum(queue_depth) AS queue_depth_sum,
  count(queue_depth) AS queue_depth_n
FROM (
  SELECT
    *,
    ((end_ns - $from_ns::BIGINT - 1) // $step_ns::BIGINT)::BIGINT AS bucket,
    -- A request kept by head sampling stands for 1 ÷ its sampling probability requests, as in
    -- request-aggregates.sql: a task's share of its pool's cost is taken of the fleet's usage.
    coalesce(sample_weight, 1.0) AS w
  FROM request_facts
  WHERE end_ns > $from_ns::BIGINT AND end_ns <= $to_ns::BIGINT
)
GROUP BY bucket, pool
