-- list-tasks.sql for ClickHouse: the same rows (that file documents them). Without CTEs the
-- members' subquery is written twice: once to choose the tasks (the newest $limit whose last
-- request matches the filters), once for all their requests — `(task_id, task_start_ns) GLOBAL IN`
-- the chosen ones, since 18.16 takes one JOIN per SELECT and joins no NULL key. Dimensions are d_…
-- inside (a ClickHouse alias named like a column replaces it in the whole query).
SELECT
  task_id, workflow_id, conversation_id, workflow_type, tenant, priority, pool, d_model AS model,
  d_region AS region, d_gpu_type AS gpu_type, trace_id, workflow_step, step_key, attempt, is_final_attempt, is_task_last,
  outcome, error_type, start_ns, end_ns, e2e_ms, ttft_ms, gpu_ms, input_tokens, output_tokens,
  cost_usd, task_start_ns, task_end_ns, task_requests, task_steps, task_declared_steps,
  task_final_max_ttft_ms, task_final_max_e2e_ms, status
FROM (
-- @include task-members.clickhouse.sql
)
WHERE (task_id, task_start_ns) GLOBAL IN (
  SELECT task_id, task_start_ns
  FROM (
-- @include task-members.clickhouse.sql
  )
  WHERE is_task_last
    AND ifNull(
      ($f_pool IS NULL OR pool = $f_pool)
        AND ($f_model IS NULL OR d_model = $f_model)
        AND ($f_region IS NULL OR d_region = $f_region)
        AND ($f_gpu_type IS NULL OR d_gpu_type = $f_gpu_type)
        AND ($f_tenant IS NULL OR tenant = $f_tenant)
        AND ($f_priority IS NULL OR toString(priority) = $f_priority)
        AND ($f_workflow_type IS NULL OR workflow_type = $f_workflow_type)
        AND ($f_status IS NULL OR status = $f_status),
      0
    )
  ORDER BY task_end_ns DESC, task_id
  LIMIT $limit
)
ORDER BY task_end_ns DESC, task_id, task_start_ns, start_ns
