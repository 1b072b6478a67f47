-- Fragment (CTEs): replica-time per (bucket, pool), from one of two sources.
--
-- A pool with the `governor.pool.replicas` gauge (an exporter that knows the pool's size) is read
-- from it as a step function: a value holds until the pool's next point, at most $stale_ns (then
-- the series is stale, as in Prometheus), so a point before the window start sets the window's
-- initial value. A series' first point also covers one reporting interval before it (the gap to its
-- next point, at most $stale_ns): an exporter reports a pool that already runs, and its capacity cost
-- money since the scrape before — but not for minutes before anyone was watching. Several points of
-- one pool at the same instant count once (their maximum).
--
-- Any other pool is counted from its pods as a real fleet shows them: each scrape target of the
-- pool (the prometheus receiver's `up`, 0 while a pod starts and its server is not up yet, 1 once it
-- serves; or a runtime's per-pod gauge) is one paid replica while its series is fresh — starting,
-- ready and draining pods all hold GPUs. A pod's sample holds until its next one; its last sample
-- holds one scrape interval (its own gap to the sample before, at most $stale_ns) and its first
-- covers one interval before it, so a pod that stops being scraped stops costing within a scrape
-- instead of the 5-minute lookback. Targets are scraped at different instants: each pod is its own
-- series, never "the pods present at the newest instant".
gauge_buckets AS (
  SELECT
    b AS bucket,
    $from_ns::BIGINT + b * $step_ns::BIGINT AS b_start,
    least($from_ns::BIGINT + (b + 1) * $step_ns::BIGINT, $to_ns::BIGINT) AS b_end
  FROM (SELECT unnest(range(0::BIGINT, (($to_ns::BIGINT - $from_ns::BIGINT + $step_ns::BIGINT - 1) // $step_ns::BIGINT)::BIGINT)) AS b)
),
replica_points AS (
  SELECT pool, time_ns, max(value) AS value
  FROM metric_points
  WHERE name = 'governor.pool.replicas'
    AND pool IS NOT NULL
    AND value IS NOT NULL
    AND time_ns >= $from_ns::BIGINT - $stale_ns::BIGINT
    AND time_ns < $to_ns::BIGINT + $stale_ns::BIGINT
  GROUP BY pool, time_ns
),
replica_segments AS (
  SELECT
    pool,
    value,
    CASE
      WHEN lag(time_ns) OVER (PARTITION BY pool ORDER BY time_ns) IS NULL THEN
        time_ns - least($stale_ns::BIGINT, coalesce(lead(time_ns) OVER (PARTITION BY pool ORDER BY time_ns) - time_ns, $stale_ns::BIGINT))
      ELSE time_ns
    END AS seg_start,
    least(lead(time_ns, 1, $to_ns::BIGINT) OVER (PARTITION BY pool ORDER BY time_ns), time_ns + $stale_ns::BIGINT, $to_ns::BIGINT) AS seg_end
  FROM replica_points
),
gauge_time AS (
  SELECT
    b.bucket,
    s.pool,
    sum(s.value * (least(s.seg_end, b.b_end) - greatest(s.seg_start, b.b_start))) AS replica_ns,
    sum(least(s.seg_end, b.b_end) - greatest(s.seg_start, b.b_start)) AS covered_ns
  FROM replica_segments s
  JOIN gauge_buckets b ON s.seg_start < b.b_end AND s.seg_end > b.b_start
  GROUP BY b.bucket, s.pool
),
pod_points AS (
  SELECT pool, replica, time_ns
  FROM metric_points
  WHERE name IN ('up', 'vllm:num_requests_running', 'sglang:num_running_reqs')
    AND pool IS NOT NULL
    AND replica IS NOT NULL
    AND time_ns >= $from_ns::BIGINT - $stale_ns::BIGINT
    AND time_ns < $to_ns::BIGINT + $stale_ns::BIGINT
    AND pool NOT IN (SELECT DISTINCT pool FROM replica_points)
  GROUP BY pool, replica, time_ns
),
pod_gaps AS (
  SELECT
    pool,
    replica,
    time_ns,
    time_ns - lag(time_ns) OVER w AS gap_before,
    lead(time_ns) OVER w - time_ns AS gap_after
  FROM pod_points
  WINDOW w AS (PARTITION BY pool, replica ORDER BY time_ns)
),
pod_segments AS (
  SELECT
    pool,
    replica,
    CASE
      WHEN gap_before IS NULL OR gap_before > $stale_ns::BIGINT
        THEN time_ns - least($stale_ns::BIGINT, coalesce(gap_after, $stale_ns::BIGINT))
      ELSE time_ns
    END AS seg_start,
    least(
      CASE
        WHEN gap_after IS NOT NULL AND gap_after <= $stale_ns::BIGINT THEN time_ns + gap_after
        ELSE time_ns + least($stale_ns::BIGINT, coalesce(gap_before, $stale_ns::BIGINT))
      END,
      $to_ns::BIGINT
    ) AS seg_end
  FROM pod_gaps
),
pod_time AS (
  SELECT
    b.bucket,
    s.pool,
    sum(least(s.seg_end, b.b_end) - greatest(s.seg_start, b.b_start)) AS replica_ns,
    -- The part of the bucket in which the pool had any pod: from its first pod segment to its last.
    max(least(s.seg_end, b.b_end)) - min(greatest(s.seg_start, b.b_start)) AS covered_ns
  FROM pod_segments s
  JOIN gauge_buckets b ON s.seg_start < b.b_end AND s.seg_end > b.b_start
  GROUP BY b.bucket, s.pool
),
replica_time AS (
  SELECT * FROM gauge_time
  UNION ALL
  SELECT * FROM pod_time
)
