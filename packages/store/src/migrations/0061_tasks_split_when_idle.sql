-- A task that went idle for longer than signals.task_idle_ms is two tasks with the same task_id
-- (task-columns.sql in @governor/signals): every request of one carries its start, task_start_ns,
-- so the tasks view groups by both.
CREATE OR REPLACE VIEW tasks AS
SELECT
  task_id,
  any_value(workflow_id) AS workflow_id,
  any_value(conversation_id) AS conversation_id,
  arg_max(workflow_type, end_ns) AS workflow_type,
  arg_max(tenant, end_ns) AS tenant,
  arg_max(priority, end_ns) AS priority,
  arg_max(pool, end_ns) AS pool,
  arg_max(model, end_ns) AS model,
  min(task_start_ns) AS start_ns,
  max(task_end_ns) AS end_ns,
  (max(task_end_ns) - min(task_start_ns)) / 1e6 AS e2e_ms,
  count(*) AS requests,
  count(*) FILTER (WHERE attempt > 1) AS retries,
  max(task_steps) AS steps,
  max(task_declared_steps) AS declared_steps,
  bool_and(task_complete) AS complete,
  bool_and(task_finals_ok) AS final_attempts_succeeded,
  CASE
    WHEN NOT bool_and(task_complete) THEN 'incomplete'
    WHEN bool_and(task_finals_ok) THEN 'success'
    ELSE 'failed'
  END AS outcome,
  max(task_final_max_ttft_ms) AS max_final_ttft_ms,
  max(task_final_max_e2e_ms) AS max_final_e2e_ms,
  sum(gpu_ms) AS gpu_ms,
  sum(input_tokens) AS input_tokens,
  sum(output_tokens) AS output_tokens,
  sum(cost_usd) AS explicit_cost_usd,
  list(DISTINCT pool ORDER BY pool) FILTER (WHERE pool IS NOT NULL) AS pools
FROM request_history
GROUP BY task_id, task_start_ns;
