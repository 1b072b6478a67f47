-- Replicas serving per pool at $at_ns, from each pod's own series as real scrapes deliver them
-- (targets scraped at different instants): a pod is ready when the last `up` sample of its scrape
-- target is 1 (the prometheus receiver reports 0 while the pod starts and its server does not
-- answer), or, for a pod whose target reports no `up`, when it reports a runtime gauge. A series is
-- fresh while its last sample is younger than two of its scrape intervals (at most the lookback):
-- a pod that stopped being scraped (scaled in, gone) stops counting within a scrape or two. A pool
-- whose pods are not scraped but whose InferencePool is (the Gateway API Inference Extension's
-- endpoint picker reports `inference_pool_ready_pods{name}`) reads its last value. Two samples of a
-- series at one instant (a point sent twice with another value) read as the larger.
WITH samples AS (
  SELECT pool, replica, name, time_ns, value
  FROM metric_points
  WHERE name IN ('up', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc',
                 'sglang:num_running_reqs')
    AND time_ns > $from_ns AND time_ns <= $at_ns
    AND pool IS NOT NULL AND replica IS NOT NULL
),
series AS (
  SELECT
    pool,
    replica,
    name,
    max(time_ns) AS last_ns,
    arg_max(value, (time_ns, value)) AS last_value,
    CASE WHEN count(DISTINCT time_ns) > 1
      THEN (max(time_ns) - min(time_ns)) / (count(DISTINCT time_ns) - 1)
    END AS interval_ns
  FROM samples
  GROUP BY pool, replica, name
),
pods AS (
  SELECT
    pool,
    replica,
    bool_or(name = 'up') AS has_up,
    bool_or(name = 'up' AND fresh AND last_value = 1) AS up_ready,
    bool_or(name <> 'up' AND fresh) AS runtime_fresh
  FROM (
    SELECT *, interval_ns IS NULL OR last_ns >= $at_ns - 2 * interval_ns AS fresh FROM series
  )
  GROUP BY pool, replica
),
per_pod AS (
  SELECT pool, count(*) AS ready
  FROM pods
  WHERE CASE WHEN has_up THEN up_ready ELSE runtime_fresh END
  GROUP BY pool
),
inference_pools AS (
  SELECT pool, arg_max(value, (time_ns, value)) AS ready
  FROM metric_points
  WHERE name = 'inference_pool_ready_pods' AND pool IS NOT NULL AND isfinite(value)
    AND time_ns > $from_ns AND time_ns <= $at_ns
  GROUP BY pool
)
SELECT pool, ready FROM per_pod
UNION ALL
SELECT pool, ready FROM inference_pools
WHERE ready > 0 AND pool NOT IN (SELECT pool FROM pods)
