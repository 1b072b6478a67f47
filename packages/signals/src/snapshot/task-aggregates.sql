-- Task-level signals per (bucket, group). A task belongs to the window in which it ENDED (its last
-- request's end). It succeeds when it is complete (every declared workflow step was seen) and the
-- final attempt of each step succeeded; it is good (goodput) when it also met the SLO on every
-- final attempt (TTFT ≤ $slo_ttft_ms when the request reports a first token, e2e ≤ $slo_e2e_ms).
-- An incomplete task whose end is after $pending_after_ns (newest event − lateness) may still get
-- its next step: it is pending and not counted yet; an older incomplete task was abandoned and
-- counts as failed. A task counts in every group one of its requests falls into.
WITH
-- @include config-pools.sql
,
members AS (
  SELECT
    r.* REPLACE (
      coalesce(r.model, c.model) AS model,
      coalesce(r.region, c.region) AS region,
      coalesce(r.gpu_type, c.gpu_type) AS gpu_type
    ),
    ((r.task_end_ns - $from_ns::BIGINT - 1) // $step_ns::BIGINT)::BIGINT AS bucket
  FROM request_facts r
  LEFT JOIN cfg_pools c ON c.name = r.pool
  WHERE r.task_end_ns > $from_ns::BIGINT AND r.task_end_ns <= $to_ns::BIGINT
),
task_state AS (
  SELECT
    bucket,
    task_id,
    bool_and(outcome = 'success') FILTER (WHERE is_final_attempt) AS finals_ok,
    bool_and(
      ($slo_ttft_ms::DOUBLE IS NULL OR ttft_ms IS NULL OR ttft_ms <= $slo_ttft_ms::DOUBLE)
      AND ($slo_e2e_ms::DOUBLE IS NULL OR e2e_ms <= $slo_e2e_ms::DOUBLE)
    ) FILTER (WHERE is_final_attempt) AS finals_in_slo,
    any_value(task_steps) AS steps,
    any_value(task_declared_steps) AS declared_steps,
    any_value(task_start_ns) AS task_start_ns,
    any_value(task_end_ns) AS task_end_ns
  FROM members
  GROUP BY bucket, task_id
),
task_status AS (
  SELECT
    *,
    (declared_steps IS NULL OR steps >= declared_steps) AS complete,
    (declared_steps IS NOT NULL AND steps < declared_steps AND task_end_ns > $pending_after_ns::BIGINT) AS pending
  FROM task_state
),
membership AS (
  SELECT DISTINCT
    bucket,
    task_id,
    CASE WHEN $by_pool THEN pool END AS k_pool,
    CASE WHEN $by_model THEN model END AS k_model,
    CASE WHEN $by_region THEN region END AS k_region,
    CASE WHEN $by_gpu_type THEN gpu_type END AS k_gpu_type,
    CASE WHEN $by_tenant THEN tenant END AS k_tenant,
    CASE WHEN $by_priority THEN priority END AS k_priority,
    CASE WHEN $by_workflow_type THEN workflow_type END AS k_workflow_type
  FROM members
  WHERE ($f_pool::VARCHAR IS NULL OR pool = $f_pool::VARCHAR)
    AND ($f_model::VARCHAR IS NULL OR model = $f_model::VARCHAR)
    AND ($f_region::VARCHAR IS NULL OR region = $f_region::VARCHAR)
    AND ($f_gpu_type::VARCHAR IS NULL OR gpu_type = $f_gpu_type::VARCHAR)
    AND ($f_tenant::VARCHAR IS NULL OR tenant = $f_tenant::VARCHAR)
    AND ($f_priority::VARCHAR IS NULL OR priority::VARCHAR = $f_priority::VARCHAR)
    AND ($f_workflow_type::VARCHAR IS NULL OR workflow_type = $f_workflow_type::VARCHAR)
)
SELECT
  m.bucket, m.k_pool, m.k_model, m.k_region, m.k_gpu_type, m.k_tenant, m.k_priority, m.k_workflow_type,
  count(*) FILTER (WHERE NOT t.pending) AS tasks,
  count(*) FILTER (WHERE t.complete AND t.finals_ok) AS successful_tasks,
  count(*) FILTER (WHERE t.complete AND t.finals_ok AND t.finals_in_slo) AS good_tasks,
  count(*) FILTER (WHERE NOT t.complete AND NOT t.pending) AS abandoned_tasks,
  count(*) FILTER (WHERE t.pending) AS pending_tasks,
  quantile_cont((t.task_end_ns - t.task_start_ns) / 1e6, [0.5, 0.95, 0.99]) FILTER (WHERE NOT t.pending) AS task_e2e_q
FROM membership m
JOIN task_status t ON t.bucket = m.bucket AND t.task_id = m.task_id
GROUP BY m.bucket, m.k_pool, m.k_model, m.k_region, m.k_gpu_type, m.k_tenant, m.k_priority, m.k_workflow_type
