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
  -- Ranked on the columns the orders read, joined back by trace below: a window or an aggregate
  -- over whole request rows (a hundred columns) costs several times more.
  SELECT
    trace_id,
    task_id,
    step_key,
    workflow_steps,
    outcome,
    start_ns,
    end_ns,
    ttft_ms,
    e2e_ms,
    row_number() OVER (PARTITION BY task_id, step_key ORDER BY attempt DESC, end_ns DESC, start_ns DESC, outcome, pool, replica, trace_id DESC) = 1 AS is_final_attempt,
    row_number() OVER (PARTITION BY task_id ORDER BY end_ns DESC, start_ns DESC, pool, model, tenant, replica, outcome, trace_id DESC) = 1 AS is_task_last
  FROM (
    SELECT trace_id, task_id, step_key, attempt, workflow_steps, outcome, start_ns, end_ns, ttft_ms, e2e_ms, pool, model, tenant, replica
    FROM task_rows
  )
),
task_totals AS (
  SELECT
    task_id,
    min(start_ns) AS task_start_ns,
    max(end_ns) AS task_end_ns,
    count(*)::INTEGER AS task_requests,
    count(DISTINCT step_key)::INTEGER AS task_steps,
    max(workflow_steps)::INTEGER AS task_declared_steps,
    coalesce(bool_and(outcome = 'success') FILTER (WHERE is_final_attempt), false) AS task_finals_ok,
    max(ttft_ms) FILTER (WHERE is_final_attempt) AS task_final_max_ttft_ms,
    max(e2e_ms) FILTER (WHERE is_final_attempt) AS task_final_max_e2e_ms
  FROM attempts
  GROUP BY task_id
),
facts AS (
  -- A request's trace id is unique among task_rows (one row per trace).
  SELECT
    r.*,
    a.is_final_attempt,
    a.is_task_last,
    t.* EXCLUDE (task_id),
    (t.task_declared_steps IS NULL OR t.task_steps >= t.task_declared_steps) AS task_complete
  FROM task_rows r
  JOIN attempts a ON a.trace_id = r.trace_id
  JOIN task_totals t ON t.task_id = r.task_id
)
