-- Fragment (CTEs): the window's requests (window-keyed-requests.sql) keyed for the queries, with the
-- group cap. `keyed_all` holds every request of the window and whether it passes the filter
-- (`in_filter`); `keyed_requests` only those that do.
--
-- Group cap: only the $max_groups groups with the most requests (over the whole range, so a series
-- keeps the same groups in every bucket) keep their key; every other request gets NULL keys and
-- `k_other`, so the queries return at most $max_groups + 1 groups however many tenants there are.
-- `group_count` is the number of groups before the cap. Requests outside the filter count only
-- towards their pool's usage, so their keys are dropped too. Ranking the groups and joining every
-- request back to its rank costs a tenth of a snapshot, so a window known to hold no more groups
-- than the cap reads windowed-requests-uncapped.sql instead (window-rows.ts decides).
-- @include window-keyed-requests.sql
,
group_sizes AS (
  SELECT k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type,
    sum(coalesce(sample_weight, 1.0)) AS group_requests
  FROM keyed_raw
  WHERE in_filter
  GROUP BY k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type
),
ranked_groups AS (
  SELECT
    *,
    row_number() OVER (
      ORDER BY group_requests DESC, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type
    ) AS group_rank,
    count(*) OVER () AS group_count
  FROM group_sizes
),
keyed_all AS NOT MATERIALIZED (
  SELECT
    r.* REPLACE (
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_pool END AS k_pool,
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_model END AS k_model,
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_region END AS k_region,
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_gpu_type END AS k_gpu_type,
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_tenant END AS k_tenant,
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_priority END AS k_priority,
      CASE WHEN r.in_filter AND g.group_rank <= $max_groups::BIGINT THEN r.k_workflow_type END AS k_workflow_type
    ),
    r.in_filter AND coalesce(g.group_rank > $max_groups::BIGINT, false) AS k_other,
    g.group_count
  FROM keyed_raw r
  -- Only key equalities here: anything else in the ON clause (such as r.in_filter) turns this hash
  -- join into a nested loop (a 50,000-group window took 150 s instead of 0.2 s).
  LEFT JOIN ranked_groups g
    ON r.k_pool IS NOT DISTINCT FROM g.k_pool
    AND r.k_model IS NOT DISTINCT FROM g.k_model
    AND r.k_region IS NOT DISTINCT FROM g.k_region
    AND r.k_gpu_type IS NOT DISTINCT FROM g.k_gpu_type
    AND r.k_tenant IS NOT DISTINCT FROM g.k_tenant
    AND r.k_priority IS NOT DISTINCT FROM g.k_priority
    AND r.k_workflow_type IS NOT DISTINCT FROM g.k_workflow_type
),
keyed_requests AS (
  SELECT * FROM keyed_all WHERE in_filter
)
