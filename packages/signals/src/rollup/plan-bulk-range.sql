-- For a large batch, what the literal key lists give a small one, found by joins: the span range
-- to re-read for the touched traces (what earlier refreshes saw of them: lo_ns..hi_ns), and the
-- end_ns range of every earlier row involved — the touched traces', their tasks' now, and the
-- tasks they belonged to before — which bounds apply-refresh.sql's scans of request_facts to the
-- row groups that hold them. Only rows ending at or after $lo_end_ns are looked at (reachBack in
-- refresh-request-facts.ts lowers it to min_task_start_ns until no task found starts earlier).
-- Only narrow integer columns of request_facts are scanned here (the trace ids would double the
-- scan): rows are matched by key, and a key two trace ids share only widens the ranges, which
-- apply-refresh.sql narrows by trace id.
WITH new_spans AS (
  SELECT (hash(trace_id) >> 1)::BIGINT AS trace_key, (hash(task_id) >> 1)::BIGINT AS task_key
  FROM span_store
  WHERE rowid > $lo_rowid AND rowid <= $hi_rowid AND start_ns >= $min_start_ns
),
recent AS (
  SELECT trace_key, task_key, first_span_ns, last_span_ns, end_ns, task_start_ns
  FROM rollup.main.request_facts
  WHERE end_ns >= $lo_end_ns
),
known AS (
  SELECT * FROM recent
  WHERE trace_key IN (SELECT trace_key FROM new_spans) OR task_key IN (SELECT task_key FROM new_spans)
),
earlier AS (
  SELECT * FROM known WHERE trace_key IN (SELECT trace_key FROM new_spans)
),
former_tasks AS (
  SELECT end_ns, task_start_ns FROM recent WHERE task_key IN (SELECT task_key FROM earlier)
),
ends AS (
  SELECT end_ns, task_start_ns FROM known
  UNION ALL
  SELECT end_ns, task_start_ns FROM former_tasks
)
SELECT
  (SELECT min(first_span_ns) FROM earlier) AS lo_ns,
  (SELECT max(last_span_ns) FROM earlier) AS hi_ns,
  (SELECT min(end_ns) FROM ends) AS old_lo_end_ns,
  (SELECT max(end_ns) FROM ends) AS old_hi_end_ns,
  (SELECT min(task_start_ns) FROM ends) AS min_task_start_ns
