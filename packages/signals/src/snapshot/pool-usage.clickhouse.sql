-- pool-usage.sql for ClickHouse: the same rows (that file documents them). The aggregates are
-- a_… inside and renamed outside: a ClickHouse alias is visible in the whole SELECT, so
-- `sum(output_tokens * w) AS output_tokens` would read itself.
SELECT
  bucket,
  pool,
  a_requests AS requests,
  a_tokens AS tokens,
  a_output_tokens AS output_tokens,
  a_gpu_ms AS gpu_ms,
  a_explicit_cost_usd AS explicit_cost_usd,
  a_kv_usage_sum AS kv_usage_sum,
  a_kv_usage_n AS kv_usage_n,
  a_queue_depth_sum AS queue_depth_sum,
  a_queue_depth_n AS queue_depth_n
FROM (
  SELECT
    bucket,
    pool,
    sum(w) AS a_requests,
    sum((ifNull(r_input, 0) + ifNull(r_output, 0)) * w) AS a_tokens,
    sum(r_output * w) AS a_output_tokens,
    sum(r_gpu_ms * w) AS a_gpu_ms,
    sum(r_cost * w) AS a_explicit_cost_usd,
    sum(r_kv) AS a_kv_usage_sum,
    count(r_kv) AS a_kv_usage_n,
    sum(r_queue) AS a_queue_depth_sum,
    count(r_queue) AS a_queue_depth_n
  FROM (
    SELECT
      intDiv(end_ns - $from_ns - 1, $step_ns) AS bucket,
      pool,
      ifNull(sample_weight, 1.0) AS w,
      input_tokens AS r_input,
      output_tokens AS r_output,
      gpu_ms AS r_gpu_ms,
      cost_usd AS r_cost,
      kv_usage AS r_kv,
      queue_depth AS r_queue
    FROM {{database}}.request_facts FINAL
    WHERE deleted = 0 AND end_ns > $from_ns AND end_ns <= $to_ns
      AND start_ns >= $facts_from_ns AND start_ns <= $to_ns
      AND intDiv(start_ns, 60000000000) BETWEEN intDiv($facts_from_ns, 60000000000) AND intDiv($to_ns, 60000000000)
  )
  GROUP BY bucket, pool
)
