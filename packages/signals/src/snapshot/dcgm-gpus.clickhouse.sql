-- Fragment: per pool, the GPU product and GPUs per pod DCGM reports (dcgm_gpus in pool-gauges.sql):
-- each GPU series names its pod, whose own scrape target names its pool. visitParamExtractString
-- reads '' for a missing key, so missing keys are tested with visitParamHas. No alias repeats a
-- column's name: ClickHouse would read the alias in WHERE.
  SELECT
    rp_pool AS pool,
    if(countIf(visitParamHas(attrs, 'modelName')) = 0, NULL,
      minIf(visitParamExtractString(attrs, 'modelName'), visitParamHas(attrs, 'modelName'))) AS gpu_product,
    toFloat64(uniqExact(concat(replica, '|', multiIf(
      visitParamHas(attrs, 'UUID'), visitParamExtractString(attrs, 'UUID'),
      visitParamHas(attrs, 'gpu'), visitParamExtractString(attrs, 'gpu'),
      '')))) / uniqExact(replica) AS dcgm_gpus_per_replica
  FROM (
    SELECT replica, ifNull(attributes, '') AS attrs
    FROM {{database}}.metric_store FINAL
    WHERE name = 'DCGM_FI_DEV_GPU_UTIL' AND pool IS NULL AND replica IS NOT NULL
      AND time_ns > $from_ns - $stale_ns AND time_ns <= $to_ns
  )
  GLOBAL ALL INNER JOIN (
    SELECT replica, argMax(assumeNotNull(pool), (time_ns, assumeNotNull(pool))) AS rp_pool
    FROM {{database}}.metric_store FINAL
    WHERE name IN ('up', 'vllm:num_requests_running', 'sglang:num_running_reqs')
      AND pool IS NOT NULL AND replica IS NOT NULL
      AND time_ns > $from_ns - $stale_ns AND time_ns <= $to_ns
    GROUP BY replica
  ) USING (replica)
  GROUP BY rp_pool
