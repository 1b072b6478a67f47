-- Engine work per pool over (from_ns, at_ns], from each serving replica's cumulative runtime
-- counters (vLLM: prompt tokens prefilled, tokens generated, engine steps = the count of
-- vllm:iteration_tokens_total) and the GPU's busy share between samples (DCGM_FI_DEV_GPU_UTIL).
-- Unlike a request's span, which reports when the request ends — tens of seconds later for long
-- prompts and outputs — these show what the engine did in the window itself. A counter that went
-- down or restarted (a new start time: the process restarted) counts nothing for that interval.
WITH samples AS (
  SELECT
    pool,
    replica,
    time_ns,
    max(value) FILTER (WHERE name = 'DCGM_FI_DEV_GPU_UTIL') AS util_pct,
    max(value) FILTER (WHERE name = 'vllm:prompt_tokens_total') AS prompt_tokens,
    max(value) FILTER (WHERE name = 'vllm:generation_tokens_total') AS generation_tokens,
    max(count) FILTER (WHERE name = 'vllm:iteration_tokens_total') AS steps,
    max(start_ns) FILTER (WHERE name = 'vllm:iteration_tokens_total') AS start_ns
  FROM metric_points
  WHERE name IN ('DCGM_FI_DEV_GPU_UTIL', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total',
                 'vllm:iteration_tokens_total')
    AND time_ns > $lookback_ns AND time_ns <= $at_ns
    AND pool IS NOT NULL AND replica IS NOT NULL
  GROUP BY pool, replica, time_ns
),
deltas AS (
  SELECT
    pool,
    replica,
    time_ns,
    util_pct,
    time_ns - lag(time_ns) OVER w AS dt_ns,
    prompt_tokens - lag(prompt_tokens) OVER w AS d_prompt,
    generation_tokens - lag(generation_tokens) OVER w AS d_generation,
    steps - lag(steps) OVER w AS d_steps,
    start_ns IS NOT DISTINCT FROM lag(start_ns) OVER w AS same_run
  FROM samples
  WHERE steps IS NOT NULL AND prompt_tokens IS NOT NULL AND generation_tokens IS NOT NULL
    AND util_pct IS NOT NULL
  WINDOW w AS (PARTITION BY pool, replica ORDER BY time_ns)
)
SELECT
  pool,
  sum(d_prompt) AS prompt_tokens,
  sum(d_generation) AS generation_tokens,
  sum(d_steps) AS steps,
  sum(least(greatest(util_pct, 0), 100) / 100.0 * dt_ns / 1e6) AS busy_ms,
  count(DISTINCT replica) AS replicas
FROM deltas
WHERE time_ns > $from_ns
  AND dt_ns IS NOT NULL
  AND same_run
  AND d_prompt >= 0 AND d_generation >= 0 AND d_steps >= 0
GROUP BY pool
