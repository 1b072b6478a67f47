-- Fragment (CTEs): the window's requests (window-keyed-requests.sql) keyed for the queries without the
-- group cap, for a window with no more groups than $max_groups (window-rows.ts runs the capped
-- windowed-requests.sql when it has more): every group keeps its key, `k_other` is false and
-- `group_count` NULL (limitGroups in window-rows.ts counts the groups over the query's result).
-- Requests outside the filter count only towards their pool's usage, so their keys are dropped, as
-- with the cap.
-- @include window-keyed-requests.sql
,
keyed_all AS NOT MATERIALIZED (
  SELECT
    * REPLACE (
      CASE WHEN in_filter THEN k_pool END AS k_pool,
      CASE WHEN in_filter THEN k_model END AS k_model,
      CASE WHEN in_filter THEN k_region END AS k_region,
      CASE WHEN in_filter THEN k_gpu_type END AS k_gpu_type,
      CASE WHEN in_filter THEN k_tenant END AS k_tenant,
      CASE WHEN in_filter THEN k_priority END AS k_priority,
      CASE WHEN in_filter THEN k_workflow_type END AS k_workflow_type
    ),
    false AS k_other,
    NULL::BIGINT AS group_count
  FROM keyed_raw
),
keyed_requests AS (
  SELECT * FROM keyed_all WHERE in_filter
)
