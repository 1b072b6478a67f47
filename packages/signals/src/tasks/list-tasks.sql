-- Tasks that ENDED in ($from_ns, $to_ns], newest first, with all their requests (attempts). A
-- task's dimensions are those of its last request; `status` is success | failed | abandoned
-- (declared steps missing, no more expected) | pending (declared steps missing, may still come).
WITH
-- @include ../snapshot/config-pools.sql
,
members AS (
  SELECT
    r.* REPLACE (
      coalesce(r.model, c.model) AS model,
      coalesce(r.region, c.region) AS region,
      coalesce(r.gpu_type, c.gpu_type) AS gpu_type
    ),
    CASE
      WHEN (NOT r.task_complete OR (r.task_declared_steps IS NULL AND coalesce(r.workflow_id, r.conversation_id) IS NOT NULL))
        AND r.task_end_ns > $pending_after_ns::BIGINT THEN 'pending'
      WHEN NOT r.task_complete THEN 'abandoned'
      WHEN r.task_finals_ok THEN 'success'
      ELSE 'failed'
    END AS status
  FROM request_facts r
  LEFT JOIN cfg_pools c ON c.name = r.pool
  WHERE r.task_end_ns > $from_ns::BIGINT AND r.task_end_ns <= $to_ns::BIGINT
),
chosen AS (
  -- A task is its id and its start: one that went idle and resumed is two (signals.task_idle_ms).
  SELECT task_id, task_start_ns
  FROM members
  WHERE is_task_last
    AND ($f_pool::VARCHAR IS NULL OR pool = $f_pool::VARCHAR)
    AND ($f_model::VARCHAR IS NULL OR model = $f_model::VARCHAR)
    AND ($f_region::VARCHAR IS NULL OR region = $f_region::VARCHAR)
    AND ($f_gpu_type::VARCHAR IS NULL OR gpu_type = $f_gpu_type::VARCHAR)
    AND ($f_tenant::VARCHAR IS NULL OR tenant = $f_tenant::VARCHAR)
    AND ($f_priority::VARCHAR IS NULL OR priority::VARCHAR = $f_priority::VARCHAR)
    AND ($f_workflow_type::VARCHAR IS NULL OR workflow_type = $f_workflow_type::VARCHAR)
    AND ($f_status::VARCHAR IS NULL OR status = $f_status::VARCHAR)
  ORDER BY task_end_ns DESC, task_id
  LIMIT $limit::BIGINT
)
SELECT
  m.task_id, m.workflow_id, m.conversation_id, m.workflow_type, m.tenant, m.priority, m.pool, m.model,
  m.region, m.gpu_type, m.trace_id, m.workflow_step, m.step_key, m.attempt, m.is_final_attempt, m.is_task_last,
  m.outcome, m.error_type, m.start_ns, m.end_ns, m.e2e_ms, m.ttft_ms, m.gpu_ms, m.input_tokens, m.output_tokens,
  m.cost_usd, m.task_start_ns, m.task_end_ns, m.task_requests, m.task_steps, m.task_declared_steps,
  m.task_final_max_ttft_ms, m.task_final_max_e2e_ms, m.status
FROM members m
JOIN chosen c ON c.task_id = m.task_id AND c.task_start_ns = m.task_start_ns
ORDER BY m.task_end_ns DESC, m.task_id, m.task_start_ns, m.start_ns
