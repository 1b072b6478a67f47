-- pool-gauges.sql for ClickHouse (18.16 and later): the same rows by the same rules (that file and
-- replica-gauge.sql document them). What DuckDB does with lag/lead and range joins is done here
-- with each series' sorted points as an array (arrayJoin over its indexes for the segments, over
-- the buckets a segment overlaps for the replica-time). The three gauges have one row per (bucket,
-- pool) each: one UNION ALL grouped by (bucket, pool) puts them side by side (max of the one value
-- there, NULL where a gauge has none) — each fragment read once, no joins.
SELECT
  bucket, pool,
  max(r_replica_ns) AS replica_ns, max(r_covered_ns) AS covered_ns, max(r_kv) AS kv_usage, max(r_queue) AS queue_depth,
  CAST(NULL AS Nullable(String)) AS gpu_product, CAST(NULL AS Nullable(Float64)) AS dcgm_gpus_per_replica
FROM (
  SELECT
    bucket, pool, toNullable(replica_ns) AS r_replica_ns, toNullable(covered_ns) AS r_covered_ns,
    CAST(NULL AS Nullable(Float64)) AS r_kv, CAST(NULL AS Nullable(Float64)) AS r_queue
  FROM (
-- @include replica-time.clickhouse.sql
  )
  UNION ALL
  SELECT
    bucket, pool, CAST(NULL AS Nullable(Float64)), CAST(NULL AS Nullable(Int64)),
    toNullable(kv_usage), CAST(NULL AS Nullable(Float64))
  FROM (
-- @include kv-gauge.clickhouse.sql
  )
  UNION ALL
  SELECT
    bucket, pool, CAST(NULL AS Nullable(Float64)), CAST(NULL AS Nullable(Int64)),
    CAST(NULL AS Nullable(Float64)), toNullable(queue_depth)
  FROM (
-- @include queue-gauge.clickhouse.sql
  )
)
GROUP BY bucket, pool
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
