-- read-ready-replicas.sql for ClickHouse (18.16 and later): the same ready replicas per pool by the
-- same rules (that file states them). What differs:
-- - No CTEs on 18.16: the steps (series, pods, per pool) nest as subqueries, and the pools that have
--   pod series are read again for the InferencePool fallback (GLOBAL NOT IN: metric_store is
--   Distributed).
-- - A series is fresh while its last sample is at least $at_ns − 2 × its mean interval, compared in
--   Float64 on both sides: DuckDB's `/` makes the interval a DOUBLE and compares the BIGINT times as
--   DOUBLEs, where ClickHouse would compare Int64 against Float64 exactly (they differ within 256 ns).
-- - `0 AND NULL` is NULL on 18.16, so a test that may meet a NULL (a sample without a value) says
--   through ifNull what NULL means, as DuckDB's bool_or (which skips NULLs) reads it.
-- - No FINAL: every figure here is a max, a newest value or a count of distinct instants, so an
--   export retried after a partly failed insert changes nothing. FINAL would keep only the last
--   written of two values a series sent for one instant, where DuckDB reads the larger; without it
--   this query reads the larger too, until a background merge of metric_store_local (a
--   ReplacingMergeTree on series and time) drops one of them.
-- - argMax skips a NULL value as DuckDB's arg_max does; both sides' counts are Float64 (UNION ALL on
--   18.16 takes one type).
SELECT pool, toFloat64(count()) AS ready
FROM (
  SELECT
    pool,
    replica,
    max(name = 'up') AS has_up,
    max(ifNull(name = 'up' AND fresh AND last_value = 1, 0)) AS up_ready,
    max(name != 'up' AND fresh) AS runtime_fresh
  FROM (
    SELECT
      pool,
      replica,
      name,
      last_value,
      -- The interval is NULL for a series of one instant: then it is fresh.
      ifNull(toFloat64(last_ns) >= toFloat64($at_ns) - 2 * interval_ns, 1) AS fresh
    FROM (
      SELECT
        pool,
        replica,
        name,
        max(time_ns) AS last_ns,
        argMax(value, (time_ns, value)) AS last_value,
        if(uniqExact(time_ns) > 1, (max(time_ns) - min(time_ns)) / (uniqExact(time_ns) - 1), NULL) AS interval_ns
      FROM {{database}}.metric_store
      WHERE name IN ('up', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc',
                     'sglang:num_running_reqs')
        AND time_ns > $from_ns AND time_ns <= $at_ns
        AND pool IS NOT NULL AND replica IS NOT NULL
      GROUP BY pool, replica, name
    )
  )
  GROUP BY pool, replica
)
WHERE if(has_up, up_ready, runtime_fresh)
GROUP BY pool
UNION ALL
SELECT pool, toFloat64(ready_pods) AS ready
FROM (
  SELECT pool, argMax(value, (time_ns, value)) AS ready_pods
  FROM {{database}}.metric_store
  WHERE name = 'inference_pool_ready_pods' AND pool IS NOT NULL AND isFinite(value)
    AND time_ns > $from_ns AND time_ns <= $at_ns
  GROUP BY pool
)
WHERE ready_pods > 0
  AND pool GLOBAL NOT IN (
    SELECT pool FROM {{database}}.metric_store
    WHERE name IN ('up', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc',
                   'sglang:num_running_reqs')
      AND time_ns > $from_ns AND time_ns <= $at_ns
      AND pool IS NOT NULL AND replica IS NOT NULL
  )
