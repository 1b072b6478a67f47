-- The points runtime-metrics.sql reads, for ClickHouse: each pod's cumulative request, token and
-- latency-histogram series over ($from_ns − $stale_ns, $to_ns], in series order. 18.16 has no
-- window functions, so the rise between a series' samples is taken in runtime-increases.ts.
-- FINAL: a point an export retried after a partly failed insert counts once.
SELECT
  pool,
  ifNull(replica, '') AS p_replica,
  name,
  ifNull(attributes, '') AS series,
  time_ns,
  start_ns,
  ifNull(count, value) AS v,
  if(type = 'histogram', bucket_counts, NULL) AS b,
  if(type = 'histogram', explicit_bounds, NULL) AS bounds,
  visitParamExtractString(ifNull(attributes, ''), 'finished_reason') AS reason
FROM {{database}}.metric_store FINAL
WHERE name IN ('vllm:request_success_total', 'sglang:num_requests_total', 'sglang:num_aborted_requests_total',
               'vllm:generation_tokens_total', 'sglang:generation_tokens_total',
               'vllm:time_to_first_token_seconds', 'vllm:e2e_request_latency_seconds',
               'sglang:time_to_first_token_seconds', 'sglang:e2e_request_latency_seconds')
  AND pool IS NOT NULL
  AND time_ns > $from_ns - $stale_ns AND time_ns <= $to_ns
  AND ifNull(isFinite(value), 1)
ORDER BY pool, p_replica, name, series, time_ns
