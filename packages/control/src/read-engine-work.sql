-- Engine work per pool over (from_ns, at_ns], from each serving replica's runtime counters (vLLM:
-- prompt tokens prefilled, tokens generated, engine steps = the count of
-- vllm:iteration_tokens_total) and the GPU's busy share between samples (DCGM_FI_DEV_GPU_UTIL).
-- Unlike a request's span, which reports when the request ends — tens of seconds later for long
-- prompts and outputs — these show what the engine did in the window itself.
-- Each sample's increment: a delta-temporality point is one already; a cumulative one is its rise
-- since the replica's previous sample — nothing when the counter went down or restarted (a new start
-- time: the process restarted). The busy time of a sample is its busy share × the time since the
-- previous one. Only samples where a replica reports all four over the same interval count, so work
-- and time match: a point missing from one series (a failed scrape) would stretch its increment over
-- two intervals while the others cover one. A value that is not a finite number (NaN is valid in
-- OTLP and Prometheus) is no sample.
WITH points AS (
  -- One point per series and time: a point sent twice counts once.
  SELECT
    pool,
    replica,
    name,
    time_ns,
    max(start_ns) AS start_ns,
    max(temporality) AS temporality,
    max(CASE WHEN name = 'vllm:iteration_tokens_total' THEN count ELSE value END) AS v
  FROM metric_points
  WHERE name IN ('DCGM_FI_DEV_GPU_UTIL', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total',
                 'vllm:iteration_tokens_total')
    AND time_ns > $lookback_ns AND time_ns <= $at_ns
    AND pool IS NOT NULL AND replica IS NOT NULL
    AND (value IS NULL OR isfinite(value))
  GROUP BY pool, replica, name, time_ns
),
increments AS (
  SELECT
    pool,
    replica,
    name,
    time_ns,
    CASE
      WHEN name = 'DCGM_FI_DEV_GPU_UTIL'
        THEN least(greatest(v, 0), 100) / 100.0 * (time_ns - lag(time_ns) OVER w) / 1e6
      WHEN temporality = 1 THEN greatest(v, 0)
      WHEN start_ns IS NOT DISTINCT FROM lag(start_ns) OVER w AND v >= lag(v) OVER w
        THEN v - lag(v) OVER w
    END AS inc,
    -- The interval the increment covers begins here: a delta point's start, else the previous sample.
    CASE
      WHEN name <> 'DCGM_FI_DEV_GPU_UTIL' AND temporality = 1 THEN start_ns
      ELSE lag(time_ns) OVER w
    END AS since_ns
  FROM points
  WINDOW w AS (PARTITION BY pool, replica, name ORDER BY time_ns)
),
samples AS (
  SELECT
    pool,
    replica,
    time_ns,
    any_value(inc) FILTER (WHERE name = 'DCGM_FI_DEV_GPU_UTIL') AS busy_ms,
    any_value(inc) FILTER (WHERE name = 'vllm:prompt_tokens_total') AS prompt_tokens,
    any_value(inc) FILTER (WHERE name = 'vllm:generation_tokens_total') AS generation_tokens,
    any_value(inc) FILTER (WHERE name = 'vllm:iteration_tokens_total') AS steps,
    count(since_ns) AS intervals,
    min(since_ns) = max(since_ns) AS same_interval
  FROM increments
  WHERE time_ns > $from_ns
  GROUP BY pool, replica, time_ns
)
SELECT
  pool,
  sum(prompt_tokens) AS prompt_tokens,
  sum(generation_tokens) AS generation_tokens,
  sum(steps) AS steps,
  sum(busy_ms) AS busy_ms
FROM samples
WHERE busy_ms IS NOT NULL AND prompt_tokens IS NOT NULL AND generation_tokens IS NOT NULL
  AND steps IS NOT NULL AND intervals = 4 AND same_interval
GROUP BY pool
