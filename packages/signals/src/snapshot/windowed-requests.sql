-- Fragment (CTEs): requests that ENDED in ($from_ns, $to_ns], bucketed by $step_ns (a snapshot is
-- one bucket), with the group key columns k_* (NULL for a dimension not grouped by). Dimensions a
-- span does not carry fall back to the pool's entry in the config. `keyed_all` holds every request
-- of the window and whether it passes the filter (`in_filter`); `keyed_requests` only those that do.
-- @include config-pools.sql
,
win_requests AS (
  SELECT
    r.* REPLACE (
      coalesce(r.model, c.model) AS model,
      coalesce(r.region, c.region) AS region,
      coalesce(r.gpu_type, c.gpu_type) AS gpu_type
    ),
    ((r.end_ns - $from_ns::BIGINT - 1) // $step_ns::BIGINT)::BIGINT AS bucket
  FROM request_facts r
  LEFT JOIN cfg_pools c ON c.name = r.pool
  WHERE r.end_ns > $from_ns::BIGINT AND r.end_ns <= $to_ns::BIGINT
),
keyed_all AS (
  SELECT
    *,
    CASE WHEN $by_pool THEN pool END AS k_pool,
    CASE WHEN $by_model THEN model END AS k_model,
    CASE WHEN $by_region THEN region END AS k_region,
    CASE WHEN $by_gpu_type THEN gpu_type END AS k_gpu_type,
    CASE WHEN $by_tenant THEN tenant END AS k_tenant,
    CASE WHEN $by_priority THEN priority END AS k_priority,
    CASE WHEN $by_workflow_type THEN workflow_type END AS k_workflow_type,
    coalesce(
      ($f_pool::VARCHAR IS NULL OR pool = $f_pool::VARCHAR)
        AND ($f_model::VARCHAR IS NULL OR model = $f_model::VARCHAR)
        AND ($f_region::VARCHAR IS NULL OR region = $f_region::VARCHAR)
        AND ($f_gpu_type::VARCHAR IS NULL OR gpu_type = $f_gpu_type::VARCHAR)
        AND ($f_tenant::VARCHAR IS NULL OR tenant = $f_tenant::VARCHAR)
        AND ($f_priority::VARCHAR IS NULL OR priority::VARCHAR = $f_priority::VARCHAR)
        AND ($f_workflow_type::VARCHAR IS NULL OR workflow_type = $f_workflow_type::VARCHAR),
      false
    ) AS in_filter
  FROM win_requests
),
keyed_requests AS (
  SELECT * FROM keyed_all WHERE in_filter
)
