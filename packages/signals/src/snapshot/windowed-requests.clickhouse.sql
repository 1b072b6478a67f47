-- Fragment (a subquery's body): windowed-requests.sql for ClickHouse — the group cap. Only the
-- $max_groups groups with the most requests (ties by key, as DuckDB orders them) keep their key;
-- every other request that passes the filter goes to `k_other`. `group_count` is the number of
-- groups before the cap. A group is matched by its key as text: ClickHouse joins no NULL key to
-- another, and every dimension not grouped by is NULL.
  SELECT
    *,
    if(is_top, kr_pool, NULL) AS k_pool,
    if(is_top, kr_model, NULL) AS k_model,
    if(is_top, kr_region, NULL) AS k_region,
    if(is_top, kr_gpu_type, NULL) AS k_gpu_type,
    if(is_top, kr_tenant, NULL) AS k_tenant,
    if(is_top, kr_priority, NULL) AS k_priority,
    if(is_top, kr_workflow_type, NULL) AS k_workflow_type,
    in_filter AND NOT is_top AS k_other,
    (
      SELECT uniqExact(toString((kr_pool, kr_model, kr_region, kr_gpu_type, kr_tenant, kr_priority, kr_workflow_type)))
      FROM (
-- @include window-keyed-requests.clickhouse.sql
      )
      WHERE in_filter
    ) AS group_count
  FROM (
    SELECT *, ifNull(in_top, 0) AS is_top
    FROM (
      SELECT *, toString((kr_pool, kr_model, kr_region, kr_gpu_type, kr_tenant, kr_priority, kr_workflow_type)) AS group_id
      FROM (
-- @include window-keyed-requests.clickhouse.sql
      )
    )
    GLOBAL ANY LEFT JOIN (
      SELECT group_id, toUInt8(1) AS in_top
      FROM (
        SELECT toString((kr_pool, kr_model, kr_region, kr_gpu_type, kr_tenant, kr_priority, kr_workflow_type)) AS group_id, sum(coalesce(sample_weight, 1.0)) AS group_requests,
          kr_pool, kr_model, kr_region, kr_gpu_type, kr_tenant, kr_priority, kr_workflow_type
        FROM (
-- @include window-keyed-requests.clickhouse.sql
        )
        WHERE in_filter
        GROUP BY kr_pool, kr_model, kr_region, kr_gpu_type, kr_tenant, kr_priority, kr_workflow_type
        ORDER BY group_requests DESC, kr_pool, kr_model, kr_region, kr_gpu_type, kr_tenant, kr_priority, kr_workflow_type
        LIMIT $max_groups
      )
    ) USING (group_id)
  )
