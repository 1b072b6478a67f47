-- Fragment (CTE): adds the task_* columns to relation `task_rows`, which must hold every request
-- (trace_facts row) of each task it mentions. Defines `facts` with exactly the columns of
-- request_facts.
--
-- Task = workflow id, else conversation id, else the trace. A step is (task, workflow step), or the
-- trace itself when it carries no step; the final attempt of a step is its highest attempt (ties:
-- the one that ended last). Task start/end = first request start / last request end.

facts AS (
  SELECT
    *,
    min(start_ns) OVER task AS task_start_ns,
    max(end_ns) OVER task AS task_end_ns,
    (count(*) OVER task)::INTEGER AS task_requests,
    (count(DISTINCT step_key) OVER task)::INTEGER AS task_steps,
    (max(workflow_steps) OVER task)::INTEGER AS task_declared_steps,
    row_number() OVER (PARTITION BY task_id, step_key ORDER BY attempt DESC, end_ns DESC, trace_id DESC) = 1 AS is_final_attempt
  FROM task_rows
  WINDOW task AS (PARTITION BY task_id)
)
