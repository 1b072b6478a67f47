-- pool-gauges.sql for ClickHouse (18.16 and later): the same rows by the same rules (that file and
-- replica-gauge.sql document them). What DuckDB does with lag/lead and range joins is done here
-- with each series' sorted points as an array (arrayJoin over its indexes for the segments, over
-- the buckets a segment overlaps for the replica-time). 18.16 takes one JOIN per SELECT, so the
-- joins nest; it needs join_use_nulls = 1 (set by the caller) for a missing match to read NULL.
SELECT
  bucket, pool, replica_ns, covered_ns, kv_usage, queue_depth,
  CAST(NULL AS Nullable(String)) AS gpu_product, CAST(NULL AS Nullable(Float64)) AS dcgm_gpus_per_replica
FROM (
  SELECT bucket, pool, replica_ns, covered_ns, kv_usage, queue_depth
  FROM (
    SELECT bucket, pool, replica_ns, covered_ns, kv_usage
    FROM (
      SELECT bucket, pool, replica_ns, covered_ns
      FROM (
        SELECT DISTINCT bucket, pool FROM (
          SELECT bucket, pool FROM (
-- @include replica-time.clickhouse.sql
          )
          UNION ALL
          SELECT bucket, pool FROM (
-- @include kv-gauge.clickhouse.sql
          )
          UNION ALL
          SELECT bucket, pool FROM (
-- @include queue-gauge.clickhouse.sql
          )
        )
      )
      GLOBAL ALL LEFT JOIN (
-- @include replica-time.clickhouse.sql
      ) USING (bucket, pool)
    )
    GLOBAL ALL LEFT JOIN (
-- @include kv-gauge.clickhouse.sql
    ) USING (bucket, pool)
  )
  GLOBAL ALL LEFT JOIN (
-- @include queue-gauge.clickhouse.sql
  ) USING (bucket, pool)
)
UNION ALL
-- The DCGM figures per pool, in rows of their own (bucket NULL), as pool-gauges.sql gives them.
SELECT
  CAST(NULL AS Nullable(Int64)) AS bucket, pool,
  CAST(NULL AS Nullable(Float64)) AS replica_ns, CAST(NULL AS Nullable(Int64)) AS covered_ns,
  CAST(NULL AS Nullable(Float64)) AS kv_usage, CAST(NULL AS Nullable(Float64)) AS queue_depth,
  gpu_product, dcgm_gpus_per_replica
FROM (
-- @include dcgm-gpus.clickhouse.sql
)
