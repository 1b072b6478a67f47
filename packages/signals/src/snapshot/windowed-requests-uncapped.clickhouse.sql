-- Fragment (a subquery's body): windowed-requests-uncapped.sql for ClickHouse — every group keeps
-- its key; `k_other` 0 and `group_count` NULL (the caller counts the groups when it needs to).
  SELECT
    *,
    kr_pool AS k_pool,
    kr_model AS k_model,
    kr_region AS k_region,
    kr_gpu_type AS k_gpu_type,
    kr_tenant AS k_tenant,
    kr_priority AS k_priority,
    kr_workflow_type AS k_workflow_type,
    0 AS k_other,
    CAST(NULL AS Nullable(UInt64)) AS group_count
  FROM (
-- @include window-keyed-requests.clickhouse.sql
  )
