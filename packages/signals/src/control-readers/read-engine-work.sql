-- Engine work per pool over (from_ns, at_ns], from each serving replica's runtime counters (vLLM:
-- prompt tokens prefilled, tokens generated, engine steps = the count of
-- vllm:iteration_tokens_total) and the GPU's busy share (DCGM_FI_DEV_GPU_UTIL). Unlike a request's
-- span, which reports when the request ends — tens of seconds later for long prompts and outputs —
-- these show what the engine did in the window itself.
--
-- Real scrapes: the runtime and the DCGM exporter are different targets, scraped at different
-- instants, and DCGM's points name the GPU's pod (`pod` label) but carry no pool: a DCGM series
-- takes the pool of the pod it names, learned from the pod's own scrape target. Each series gives a
-- rate over the samples it has in the window — a sample's increment over the time since the
-- series' previous sample: a delta point is one already; a cumulative one is its rise since the
-- previous sample, nothing when the counter went down or restarted (a new start time); the busy time
-- of a GPU sample is its busy share × the time since the previous one. A replica counts when all four
-- series have a rate, and its work is each rate over the time its prompt-token counter covered, so
-- work and busy time describe the same stretch even though no two series share a sample instant.
-- A value that is not a finite number (NaN: a Prometheus staleness marker) is no sample.
-- Beside the work, the prefix cache's lookups over the same stretch, where the runtime reports them:
-- prompt tokens looked up and, of those, found cached (vLLM V1's vllm:prefix_cache_queries_total and
-- vllm:prefix_cache_hits_total, counters in tokens: vllm/v1/metrics/loggers.py, 005a810b ≈ v0.10;
-- earlier V1 releases named them vllm:gpu_prefix_cache_*, not read). Their sums cover the replicas
-- that report both, each over its prompt counter's stretch as the work; NULL where none does.
WITH replica_pools AS (
  -- The pool its newest point names (a tie: the larger name), not whichever row came first.
  SELECT replica, arg_max(pool, (time_ns, pool)) AS pool
  FROM metric_points
  WHERE pool IS NOT NULL AND replica IS NOT NULL
    AND name IN ('up', 'vllm:num_requests_running', 'vllm:prompt_tokens_total', 'governor.pool.replicas')
    AND time_ns > $lookback_ns AND time_ns <= $at_ns
  GROUP BY replica
),
points AS (
  -- One point per series and time: a point sent twice, or a pod's several GPUs, count once.
  SELECT
    coalesce(m.pool, rp.pool) AS pool,
    m.replica,
    m.name,
    m.time_ns,
    max(m.start_ns) AS start_ns,
    max(m.temporality) AS temporality,
    max(CASE WHEN m.name = 'vllm:iteration_tokens_total' THEN m.count ELSE m.value END) AS v
  FROM metric_points m
  LEFT JOIN replica_pools rp ON m.pool IS NULL AND rp.replica = m.replica
  WHERE m.name IN ('DCGM_FI_DEV_GPU_UTIL', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total',
                   'vllm:iteration_tokens_total', 'vllm:prefix_cache_queries_total',
                   'vllm:prefix_cache_hits_total')
    AND m.time_ns > $lookback_ns AND m.time_ns <= $at_ns
    AND m.replica IS NOT NULL
    AND (m.value IS NULL OR isfinite(m.value))
  GROUP BY ALL
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
  WHERE pool IS NOT NULL
  WINDOW w AS (PARTITION BY pool, replica, name ORDER BY time_ns)
),
rates AS (
  SELECT pool, replica, name, sum(inc) / sum(time_ns - since_ns) AS per_ns, sum(time_ns - since_ns) AS covered_ns
  FROM increments
  WHERE time_ns > $from_ns AND inc IS NOT NULL AND since_ns IS NOT NULL AND time_ns > since_ns
  GROUP BY pool, replica, name
),
replicas AS (
  SELECT
    pool,
    replica,
    any_value(covered_ns) FILTER (WHERE name = 'vllm:prompt_tokens_total') AS span_ns,
    any_value(per_ns) FILTER (WHERE name = 'DCGM_FI_DEV_GPU_UTIL') AS busy_ms_per_ns,
    any_value(per_ns) FILTER (WHERE name = 'vllm:prompt_tokens_total') AS prompt_per_ns,
    any_value(per_ns) FILTER (WHERE name = 'vllm:generation_tokens_total') AS generation_per_ns,
    any_value(per_ns) FILTER (WHERE name = 'vllm:iteration_tokens_total') AS steps_per_ns,
    any_value(per_ns) FILTER (WHERE name = 'vllm:prefix_cache_queries_total') AS queried_per_ns,
    any_value(per_ns) FILTER (WHERE name = 'vllm:prefix_cache_hits_total') AS hits_per_ns
  FROM rates
  GROUP BY pool, replica
)
SELECT
  pool,
  sum(prompt_per_ns * span_ns) AS prompt_tokens,
  sum(generation_per_ns * span_ns) AS generation_tokens,
  sum(steps_per_ns * span_ns) AS steps,
  sum(busy_ms_per_ns * span_ns) AS busy_ms,
  sum(queried_per_ns * span_ns) FILTER (WHERE hits_per_ns IS NOT NULL) AS prefix_queried,
  sum(hits_per_ns * span_ns) FILTER (WHERE queried_per_ns IS NOT NULL) AS prefix_hits
FROM replicas
WHERE busy_ms_per_ns IS NOT NULL AND prompt_per_ns IS NOT NULL AND generation_per_ns IS NOT NULL
  AND steps_per_ns IS NOT NULL
GROUP BY pool
