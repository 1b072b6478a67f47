-- What each pool's runtimes counted over ($from_ns, $to_ns], for pools whose requests are not
-- traced: the increase of their request counters by finish reason (vLLM
-- `request_success_total{finished_reason}`, SGLang `num_requests_total` and
-- `num_aborted_requests_total`), of their generated-token counters and of their latency histograms'
-- buckets (TTFT, e2e), per pool.
-- Each series is a pod's cumulative counter as the prometheus receiver forwards it: a sample adds
-- its rise since the series' previous sample, nothing across a restart (a new start time, or a
-- count that went down); a series born inside the window adds its first value. NaN (a staleness
-- marker) is no sample.
WITH pts AS (
  SELECT
    pool,
    replica,
    name,
    attributes::VARCHAR AS series,
    time_ns,
    start_ns,
    coalesce(count, value) AS v,
    CASE WHEN type = 'histogram' THEN bucket_counts::DOUBLE[] END AS b,
    CASE WHEN type = 'histogram' THEN explicit_bounds::DOUBLE[] END AS bounds,
    json_extract_string(attributes, '$.finished_reason') AS reason
  FROM metric_points
  WHERE name IN ('vllm:request_success_total', 'sglang:num_requests_total', 'sglang:num_aborted_requests_total',
                 'vllm:generation_tokens_total', 'sglang:generation_tokens_total',
                 'vllm:time_to_first_token_seconds', 'vllm:e2e_request_latency_seconds',
                 'sglang:time_to_first_token_seconds', 'sglang:e2e_request_latency_seconds')
    AND pool IS NOT NULL
    AND time_ns > $from_ns::BIGINT - $stale_ns::BIGINT AND time_ns <= $to_ns::BIGINT
    AND (value IS NULL OR isfinite(value))
),
steps AS (
  SELECT
    *,
    lag(v) OVER w AS pv,
    lag(b) OVER w AS pb,
    lag(start_ns) OVER w AS pstart,
    lag(time_ns) OVER w AS ptime
  FROM pts
  WINDOW w AS (PARTITION BY pool, replica, name, series ORDER BY time_ns)
),
incs AS (
  SELECT
    pool,
    name,
    reason,
    bounds,
    CASE
      WHEN ptime IS NOT NULL AND start_ns IS NOT DISTINCT FROM pstart AND v >= pv THEN v - pv
      WHEN (ptime IS NULL OR start_ns IS DISTINCT FROM pstart OR v < pv) AND start_ns > $from_ns::BIGINT THEN v
    END AS inc,
    CASE
      WHEN b IS NULL THEN NULL
      WHEN ptime IS NOT NULL AND start_ns IS NOT DISTINCT FROM pstart AND v >= pv AND len(b) = len(pb)
        THEN list_transform(range(1, len(b) + 1), i -> b[i] - pb[i])
      WHEN (ptime IS NULL OR start_ns IS DISTINCT FROM pstart OR v < pv) AND start_ns > $from_ns::BIGINT THEN b
    END AS binc
  FROM steps
  WHERE time_ns > $from_ns::BIGINT
),
counters AS (
  SELECT pool, name, reason, sum(inc) AS n
  FROM incs
  WHERE binc IS NULL AND inc IS NOT NULL
  GROUP BY ALL
),
buckets AS (
  SELECT pool, name, i, any_value(bounds) AS bounds, sum(binc[i]) AS n
  FROM (SELECT pool, name, bounds, binc, unnest(range(1, len(binc) + 1)) AS i FROM incs WHERE binc IS NOT NULL)
  GROUP BY pool, name, i
)
SELECT pool, name, reason, n, NULL::DOUBLE[] AS bounds, NULL::DOUBLE[] AS counts FROM counters
UNION ALL
SELECT pool, name, NULL, sum(n), any_value(bounds), list(n ORDER BY i) FROM buckets GROUP BY pool, name
