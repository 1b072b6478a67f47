-- Fragment (CTEs): adds the task columns to relation `task_rows`, which must hold every request
-- (trace_facts row) of each task it mentions. Defines `facts` with exactly the columns of
-- request_facts. The caller fills in {{task_idle_ns}}. A request is its trace id, start and end: a
-- trace's spans further apart than the idle time are separate requests until a span covering the
-- gap arrives (refresh-request-facts.ts), and each keeps its row here.
--
-- Task = workflow id, else conversation id, else the trace, split where it went idle: a request
-- that starts more than signals.task_idle_ms after every earlier request of the task ended opens a
-- new task (task_seg counts those gaps, requests in the order of start, end and trace id). A step is
-- (task, workflow step), or the trace itself when it carries no step; the final attempt of a step
-- is its highest attempt (ties: the one that ended last, then by content; the trace id only between
-- requests alike in all of it, so other ids do not move a task to another pool or outcome). Task
-- start/end = first request start / last request end; the request that ended last (is_task_last)
-- stands for the task in the window its end falls into. A task is complete when every declared step
-- (governor.workflow.steps) was seen.

-- Only a task whose requests start more than the idle time apart can have split: the others keep
-- task_seg 0 without the two sorts below (they cost a third of the rewrite when run on every row).
spread_tasks AS (
  SELECT task_id
  FROM task_rows
  GROUP BY task_id
  HAVING max(start_ns) - min(start_ns) > {{task_idle_ns}}
),
task_segments AS (
  SELECT
    trace_id,
    start_ns,
    end_ns,
    sum(opens_task::INTEGER) OVER (
      PARTITION BY task_id ORDER BY start_ns, end_ns, trace_id ROWS UNBOUNDED PRECEDING
    ) AS task_seg
  FROM (
    SELECT
      trace_id,
      task_id,
      start_ns,
      end_ns,
      coalesce(
        start_ns > max(end_ns) OVER (
          PARTITION BY task_id ORDER BY start_ns, end_ns, trace_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) + {{task_idle_ns}},
        false
      ) AS opens_task
    FROM task_rows
    WHERE task_id IN (SELECT task_id FROM spread_tasks)
  )
),
attempts AS (
  -- Ranked on the columns the orders read, joined back by trace below: a window or an aggregate
  -- over whole request rows (a hundred columns) costs several times more.
  SELECT
    trace_id,
    task_id,
    task_seg,
    step_key,
    workflow_steps,
    outcome,
    start_ns,
    end_ns,
    ttft_ms,
    e2e_ms,
    row_number() OVER (PARTITION BY task_id, task_seg, step_key ORDER BY attempt DESC, end_ns DESC, start_ns DESC, outcome, pool, replica, trace_id DESC) = 1 AS is_final_attempt,
    row_number() OVER (PARTITION BY task_id, task_seg ORDER BY end_ns DESC, start_ns DESC, pool, model, tenant, replica, outcome, trace_id DESC) = 1 AS is_task_last
  FROM (
    SELECT
      r.trace_id, r.task_id, coalesce(s.task_seg, 0) AS task_seg, step_key, attempt, workflow_steps, outcome,
      r.start_ns, r.end_ns, ttft_ms, e2e_ms, pool, model, tenant, replica
    FROM task_rows r
    LEFT JOIN task_segments s ON s.trace_id = r.trace_id AND s.start_ns = r.start_ns AND s.end_ns = r.end_ns
  )
),
task_totals AS (
  SELECT
    task_id,
    task_seg,
    min(start_ns) AS task_start_ns,
    max(end_ns) AS task_end_ns,
    count(*)::INTEGER AS task_requests,
    count(DISTINCT step_key)::INTEGER AS task_steps,
    max(workflow_steps)::INTEGER AS task_declared_steps,
    coalesce(bool_and(outcome = 'success') FILTER (WHERE is_final_attempt), false) AS task_finals_ok,
    max(ttft_ms) FILTER (WHERE is_final_attempt) AS task_final_max_ttft_ms,
    max(e2e_ms) FILTER (WHERE is_final_attempt) AS task_final_max_e2e_ms
  FROM attempts
  GROUP BY task_id, task_seg
),
facts AS (
  -- A request (trace id, start, end) is unique among task_rows.
  SELECT
    r.*,
    a.is_final_attempt,
    a.is_task_last,
    t.* EXCLUDE (task_id, task_seg),
    (t.task_declared_steps IS NULL OR t.task_steps >= t.task_declared_steps) AS task_complete
  FROM task_rows r
  JOIN attempts a ON a.trace_id = r.trace_id AND a.start_ns = r.start_ns AND a.end_ns = r.end_ns
  JOIN task_totals t ON t.task_id = a.task_id AND t.task_seg = a.task_seg
)
