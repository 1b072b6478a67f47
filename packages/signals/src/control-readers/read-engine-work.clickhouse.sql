-- The points read-engine-work.sql reads, for ClickHouse (18.16 and later): one row per series and
-- time — (pool, replica, name, time_ns); a point sent twice, or a pod's several GPUs, as one, by the
-- same max() as DuckDB's `points` — over ($lookback_ns, $at_ns], in series order. 18.16 has no window
-- functions and no CTEs, so the increments, rates and per-replica sums that file computes with lag()
-- are taken from these rows in read-engine-work.ts (engineWorkFromPoints), by the same rules.
-- What else differs:
-- - A DCGM point names its pod but no pool: the pool comes from the pod's own newest point of its
--   scrape target, as in DuckDB's replica_pools, through one GLOBAL LEFT JOIN (metric_store is
--   Distributed; 18.16 takes one JOIN per SELECT). The caller sets join_use_nulls = 1, so a pod
--   without such a point reads NULL there and its points are left out, as DuckDB leaves them out.
-- - No FINAL: max() per series and time already counts a retried insert's copy once. FINAL would
--   keep only the last written of two values a series sent for one instant, where DuckDB reads the
--   larger; without it this query reads the larger too, until a background merge of
--   metric_store_local (a ReplacingMergeTree on series and time) drops one of them.
-- - No alias repeats a column's name (18.16 would read the alias in WHERE): the pool is `p_pool`, the
--   per-instant start, temporality and value `p_start`, `p_temporality`, `v`.
SELECT
  p_pool,
  replica,
  name,
  time_ns,
  max(start_ns) AS p_start,
  max(temporality) AS p_temporality,
  max(if(name = 'vllm:iteration_tokens_total', count, value)) AS v
FROM (
  SELECT name, replica, time_ns, start_ns, temporality, count, value, ifNull(pool, rp_pool) AS p_pool
  FROM (
    SELECT name, replica, time_ns, start_ns, temporality, count, value, pool
    FROM {{database}}.metric_store
    WHERE name IN ('DCGM_FI_DEV_GPU_UTIL', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total',
                   'vllm:iteration_tokens_total', 'vllm:prefix_cache_queries_total',
                   'vllm:prefix_cache_hits_total')
      AND time_ns > $lookback_ns AND time_ns <= $at_ns
      AND replica IS NOT NULL
      AND ifNull(isFinite(value), 1)
  )
  GLOBAL ANY LEFT JOIN (
    -- The pool its newest point names (a tie: the larger name), not whichever row came first.
    SELECT replica, argMax(assumeNotNull(pool), (time_ns, assumeNotNull(pool))) AS rp_pool
    FROM {{database}}.metric_store
    WHERE pool IS NOT NULL AND replica IS NOT NULL
      AND name IN ('up', 'vllm:num_requests_running', 'vllm:prompt_tokens_total', 'governor.pool.replicas')
      AND time_ns > $lookback_ns AND time_ns <= $at_ns
    GROUP BY replica
  ) USING (replica)
)
WHERE p_pool IS NOT NULL
GROUP BY p_pool, replica, name, time_ns
ORDER BY p_pool, replica, name, time_ns
