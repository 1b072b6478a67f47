-- Fragment (CTEs): adds the task columns to relation `task_rows`, which must hold every request
-- (trace_facts row) of each task it mentions. Defines `facts` with exactly the columns of
-- request_facts.
--
-- Task = workflow id, else conversation id, else the trace. A step is (task, workflow step), or the
-- trace itself when it carries no step; the final attempt of a step is its highest attempt (ties:
-- the one that ended last, then by content; the trace id only between requests alike in all of it,
-- so other ids do not move a task to another pool or outcome). Task start/end = first request start / last request end; the request
-- that ended last (is_task_last) stands for the task in the window its end falls into. A task is
-- complete when every declared step (governor.workflow.steps) was seen.

attempts AS (
  SELECT
    *,
    row_number() OVER (PARTITION BY task_id, step_key ORDER BY attempt DESC, end_ns DESC, start_ns DESC, outcome, pool, replica, trace_id DESC) = 1 AS is_final_attempt,
    row_number() OVER (PARTITION BY task_id ORDER BY end_ns DESC, start_ns DESC, pool, model, tenant, replica, outcome, trace_id DESC) = 1 AS is_task_last
  FROM task_rows
),
task_windowed AS (
  SELECT
    *,
    min(start_ns) OVER task AS task_start_ns,
    max(end_ns) OVER task AS task_end_ns,
    (count(*) OVER task)::INTEGER AS task_requests,
    (count(DISTINCT step_key) OVER task)::INTEGER AS task_steps,
    (max(workflow_steps) OVER task)::INTEGER AS task_declared_steps,
    coalesce(bool_and(outcome = 'success') FILTER (WHERE is_final_attempt) OVER task, false) AS task_finals_ok,
    max(ttft_ms) FILTER (WHERE is_final_attempt) OVER task AS task_final_max_ttft_ms,
    max(e2e_ms) FILTER (WHERE is_final_attempt) OVER task AS task_final_max_e2e_ms
  FROM attempts
  WINDOW task AS (PARTITION BY task_id)
),
facts AS (
  SELECT *, (task_declared_steps IS NULL OR task_steps >= task_declared_steps) AS task_complete
  FROM task_windowed
)
