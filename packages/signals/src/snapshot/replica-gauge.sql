-- Fragment (CTEs): replica-time per (bucket, pool) from the `governor.pool.replicas` gauge, read as
-- a step function: a value holds until the pool's next point, at most $stale_ns (then the series is
-- stale, as in Prometheus), so a point before the window start sets the window's initial value. A
-- series' first point also covers one reporting interval before it (the gap to its next point, at
-- most $stale_ns): an exporter reports a pool that already runs, and its capacity cost money since
-- the scrape before — but not for minutes before anyone was watching. Several points of one pool at
-- the same instant count once (their maximum).
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
replica_time AS (
  SELECT
    b.bucket,
    s.pool,
    sum(s.value * (least(s.seg_end, b.b_end) - greatest(s.seg_start, b.b_start))) AS replica_ns,
    sum(least(s.seg_end, b.b_end) - greatest(s.seg_start, b.b_start)) AS covered_ns
  FROM replica_segments s
  JOIN gauge_buckets b ON s.seg_start < b.b_end AND s.seg_end > b.b_start
  GROUP BY b.bucket, s.pool
)
