-- Per (bucket, pool): the pool's replica-time (replica-gauge.sql), its KV-cache usage and queue
-- depth from the runtimes' gauges (vLLM ≥ 0.11 `kv_cache_usage_perc`, older `gpu_cache_usage_perc`,
-- SGLang `token_usage`, the InferencePool's average from the Gateway API Inference Extension; vLLM
-- `num_requests_waiting`, SGLang `num_queue_reqs`), and the GPUs DCGM sees its pods hold. What the
-- pool served comes from request-aggregates.sql, the replicas and dimensions its requests named
-- (for a pool without a replica gauge or a full config entry) from pool-span-facts.sql; cost,
-- utilization and allocation are computed from them in pool-costs.ts and assemble-groups.ts.
WITH
-- @include replica-gauge.sql
,
kv_gauge AS (
  SELECT (time_ns - $from_ns::BIGINT - 1) // $step_ns::BIGINT AS bucket, pool, avg(value) AS kv_usage
  FROM metric_points
  WHERE name IN ('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage',
                 'inference_pool_average_kv_cache_utilization')
    AND pool IS NOT NULL AND isfinite(value)
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
  WHERE name IN ('vllm:num_requests_waiting', 'sglang:num_queue_reqs') AND pool IS NOT NULL AND isfinite(value)
    AND time_ns > $from_ns::BIGINT AND time_ns <= $to_ns::BIGINT
  GROUP BY ALL
),
queue_gauge AS (
  SELECT bucket, pool, sum(waiting) AS queue_depth FROM queue_series GROUP BY ALL
),
-- GPUs as the DCGM exporter sees them: each GPU's series names the pod holding it (`pod` label), and
-- the pod's own scrape target names its pool. The product name (`modelName`) gives the pool's GPU
-- type where the config names none, and the distinct GPUs per pod its GPUs per replica.
replica_pools AS (
  SELECT replica, arg_max(pool, (time_ns, pool)) AS pool
  FROM metric_points
  WHERE name IN ('up', 'vllm:num_requests_running', 'sglang:num_running_reqs')
    AND pool IS NOT NULL AND replica IS NOT NULL
    AND time_ns > $from_ns::BIGINT - $stale_ns::BIGINT AND time_ns <= $to_ns::BIGINT
  GROUP BY replica
),
dcgm_gpus AS (
  SELECT
    rp.pool,
    min(json_extract_string(m.attributes, '$.modelName')) AS gpu_product,
    count(DISTINCT m.replica || '|' || coalesce(json_extract_string(m.attributes, '$.UUID'), json_extract_string(m.attributes, '$.gpu'), ''))
      / count(DISTINCT m.replica) AS gpus_per_replica
  FROM metric_points m
  JOIN replica_pools rp ON rp.replica = m.replica
  WHERE m.name = 'DCGM_FI_DEV_GPU_UTIL' AND m.pool IS NULL
    AND m.time_ns > $from_ns::BIGINT - $stale_ns::BIGINT AND m.time_ns <= $to_ns::BIGINT
  GROUP BY rp.pool
),
keys AS (
  SELECT bucket, pool FROM replica_time
  UNION SELECT bucket, pool FROM kv_gauge
  UNION SELECT bucket, pool FROM queue_gauge
)
-- The DCGM figures come per pool in rows of their own (bucket NULL): window-rows.ts gives them to the
-- pool in every bucket it served, whether or not it had a gauge there.
SELECT
  k.bucket, k.pool, rt.replica_ns, rt.covered_ns, kv.kv_usage, q.queue_depth,
  NULL::VARCHAR AS gpu_product, NULL::DOUBLE AS dcgm_gpus_per_replica
FROM keys k
LEFT JOIN replica_time rt ON rt.bucket = k.bucket AND rt.pool = k.pool
LEFT JOIN kv_gauge kv ON kv.bucket = k.bucket AND kv.pool = k.pool
LEFT JOIN queue_gauge q ON q.bucket = k.bucket AND q.pool = k.pool
UNION ALL
SELECT NULL::BIGINT, pool, NULL, NULL, NULL, NULL, gpu_product, gpus_per_replica
FROM dcgm_gpus
