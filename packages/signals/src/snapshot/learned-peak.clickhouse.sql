-- learned-peak.sql for ClickHouse: per pool, the p99 over one-minute buckets of generated tokens/s
-- per replica (DuckDB's quantile_cont by its definition, from the sorted values), with at least
-- $min_minutes minutes of traffic. Run with join_use_nulls = 1; a missing replica-time reads NULL
-- and, through ifNull, falls back to the replicas the spans named, as DuckDB's CASE does.
SELECT
  pool,
  arrayMap(q -> s[toUInt64(floor(q * (length(s) - 1))) + 1]
    + (q * (length(s) - 1) - floor(q * (length(s) - 1)))
      * (s[toUInt64(ceil(q * (length(s) - 1))) + 1] - s[toUInt64(floor(q * (length(s) - 1))) + 1]), [0.99])[1] AS peak_tokens_per_s,
  length(s) AS minutes
FROM (
  SELECT pool, arraySort(groupArray(tpr)) AS s
  FROM (
    SELECT
      pool,
      u_tokens / ($step_ns / 1e9)
        / if(ifNull(replica_ns > 0, 0), replica_ns / covered_ns, toFloat64(nullIf(u_replicas, 0))) AS tpr
    FROM (
      SELECT bucket, pool, sum(output_tokens) AS u_tokens, uniqExact(replica) AS u_replicas
      FROM (
-- @include windowed-requests-uncapped.clickhouse.sql
      )
      WHERE pool IS NOT NULL
      GROUP BY bucket, pool
    )
    GLOBAL ALL LEFT JOIN (
-- @include replica-time.clickhouse.sql
    ) USING (bucket, pool)
    WHERE u_tokens > 0
  )
  WHERE tpr IS NOT NULL
  GROUP BY pool
)
WHERE length(s) >= $min_minutes
