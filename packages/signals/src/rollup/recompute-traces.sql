-- Statements shared by the refresh scripts: given sig_bounds and sig_new (the traces that received
-- spans), recompute those traces from all of their spans, give every other request of the tasks
-- involved fresh task_* columns, swap the rows in request_facts, record progress and COMMIT.

-- The span range to re-read per trace: its new spans plus what earlier refreshes saw of it.
CREATE OR REPLACE TEMP TABLE sig_traces AS
SELECT n.trace_id, least(n.lo_ns, f.first_span_ns) AS lo_ns, greatest(n.hi_ns, f.last_span_ns) AS hi_ns, f.task_id AS old_task_id
FROM sig_new n
LEFT JOIN request_facts f ON f.trace_id = n.trace_id;

CREATE OR REPLACE TEMP TABLE sig_trace_facts AS
WITH src_spans AS (
  SELECT s.* EXCLUDE (attributes, resource, events)
  FROM span_store s
  WHERE s.start_ns >= (SELECT min(lo_ns) FROM sig_traces)
    AND s.start_ns <= (SELECT max(hi_ns) FROM sig_traces)
    AND s.trace_id IN (SELECT trace_id FROM sig_traces)
),
-- @include trace-facts.sql
SELECT * FROM trace_facts;

CREATE OR REPLACE TEMP TABLE sig_tasks AS
SELECT task_id FROM sig_trace_facts
UNION
SELECT old_task_id FROM sig_traces WHERE old_task_id IS NOT NULL;

CREATE OR REPLACE TEMP TABLE sig_out AS
WITH task_rows AS (
  SELECT * FROM sig_trace_facts
  UNION ALL BY NAME
  SELECT f.* EXCLUDE (
    is_final_attempt, is_task_last, task_start_ns, task_end_ns, task_requests, task_steps, task_declared_steps,
    task_complete, task_finals_ok, task_final_max_ttft_ms, task_final_max_e2e_ms
  )
  FROM request_facts f
  WHERE f.task_id IN (SELECT task_id FROM sig_tasks)
    AND f.trace_id NOT IN (SELECT trace_id FROM sig_trace_facts)
),
-- @include task-columns.sql
SELECT * FROM facts;

DELETE FROM request_facts WHERE trace_id IN (SELECT trace_id FROM sig_out);
INSERT INTO request_facts BY NAME SELECT * FROM sig_out;

UPDATE request_facts_state SET
  last_rowid = (SELECT hi FROM sig_bounds),
  fp_trace_id = (SELECT trace_id FROM span_store WHERE rowid = (SELECT hi FROM sig_bounds)),
  fp_span_id = (SELECT span_id FROM span_store WHERE rowid = (SELECT hi FROM sig_bounds)),
  newest_span_end_ns = greatest(newest_span_end_ns, (SELECT max(max_end_ns) FROM sig_new)),
  refreshed_at = now(),
  last_mode = (SELECT mode FROM sig_bounds),
  last_traces_touched = (SELECT count(*) FROM sig_new),
  last_requests_written = (SELECT count(*) FROM sig_out),
  spans_remaining = (SELECT max_rowid - hi FROM sig_bounds)
WHERE id = 1;

DROP TABLE sig_bounds;
DROP TABLE sig_new;
DROP TABLE sig_traces;
DROP TABLE sig_trace_facts;
DROP TABLE sig_tasks;
DROP TABLE sig_out;
COMMIT;
