-- Recomputes the touched traces from all of their spans and the task columns of every request of
-- their tasks, then swaps the rows in request_facts and records progress — one transaction, so
-- readers never see a trace half-updated. refresh-request-facts.ts runs it a statement at a time
-- (each timed as a step of governor_rollup_refresh_step_seconds_total) and fills the double-brace
-- placeholders with integer literals, 32-hex trace ids, or fixed SQL of its own. Each big table is
-- scanned once per statement into a small temp table, with filters DuckDB can push into the scan;
-- every scan of request_facts is bounded by the end_ns range of the earlier rows involved. The
-- rollup tables live in their own database file, `rollup` (packages/store/src/rollup-database.ts),
-- so this transaction's commit never holds up the ingest writer's commits to the main file.
BEGIN TRANSACTION;

-- The traces of the spans that arrived since the last refresh (read by rowid: one cheap range scan).
CREATE OR REPLACE TEMP TABLE sig_traces AS
SELECT DISTINCT trace_id
FROM span_store
WHERE rowid > {{lo_rowid}} AND rowid <= {{hi_rowid}} AND start_ns >= {{min_start_ns}};

-- The facts of those traces from every span of theirs: the new ones, and the earlier ones of the
-- traces an earlier refresh already saw ({{earlier_traces}}: only those have any), in the span
-- range those refreshes recorded for them (request_facts.first_span_ns..last_span_ns). Only the
-- columns trace-facts.sql reads, scanned where they lie: a temp table of the new spans cost more to
-- fill than the range scans it saved.
CREATE OR REPLACE TEMP TABLE sig_trace_facts AS
WITH src_spans AS NOT MATERIALIZED (
  SELECT s.* EXCLUDE (attributes, resource, events, status_code, status_message, task_id, operation, batch_size, finish_reasons, scope)
  FROM span_store s
  WHERE rowid > {{lo_rowid}} AND rowid <= {{hi_rowid}} AND s.start_ns >= {{min_start_ns}}
  UNION ALL
  SELECT s.* EXCLUDE (attributes, resource, events, status_code, status_message, task_id, operation, batch_size, finish_reasons, scope)
  FROM span_store s
  WHERE s.start_ns >= {{earlier_lo_ns}} AND s.start_ns <= {{earlier_hi_ns}}
    AND (rowid <= {{lo_rowid}} OR s.start_ns < {{min_start_ns}})
    AND s.trace_id IN ({{earlier_traces}})
),
-- @include trace-facts.sql
SELECT * FROM trace_facts;

-- A request that failed before any runtime (the gateway picked a pod it could not reach, or that
-- failed without a span of its own) keeps the pool and replica of the pod it was sent to: the pod
-- at that address as its runtime spans or its scrape target (`server.address`) name it.
UPDATE sig_trace_facts t SET pool = e.pool, replica = coalesce(t.replica, e.replica)
FROM (
  SELECT endpoint, arg_max(pool, seen_ns) AS pool, arg_max(replica, seen_ns) AS replica
  FROM (
    SELECT endpoint, pool, replica, end_ns AS seen_ns
    FROM sig_trace_facts WHERE pool IS NOT NULL AND endpoint IS NOT NULL
    UNION ALL
    SELECT endpoint, pool, replica, end_ns
    FROM rollup.main.request_facts
    WHERE end_ns >= {{lo_ns}} - 3600000000000 AND pool IS NOT NULL
      AND endpoint IN (SELECT endpoint FROM sig_trace_facts WHERE pool IS NULL)
    UNION ALL
    SELECT json_extract_string(resource, '$."server.address"'), pool, replica, time_ns
    FROM metric_store
    WHERE name = 'up' AND time_ns >= {{lo_ns}} - 3600000000000 AND pool IS NOT NULL
      AND EXISTS (SELECT 1 FROM sig_trace_facts WHERE pool IS NULL AND endpoint IS NOT NULL)
  )
  WHERE endpoint IS NOT NULL
  GROUP BY endpoint
) e
WHERE t.pool IS NULL AND t.endpoint = e.endpoint;

-- What earlier refreshes wrote for the touched traces and for the other requests of their tasks
-- (the end_ns bounds prune the scan to the row groups that hold them).
CREATE OR REPLACE TEMP TABLE sig_old AS
SELECT * FROM rollup.main.request_facts
WHERE end_ns >= {{old_lo_end_ns}} AND end_ns <= {{old_hi_end_ns}}
  AND ({{trace_key_filter}} OR {{task_key_filter}});

-- The tasks involved: the touched traces' tasks now, and the ones they belonged to before.
CREATE OR REPLACE TEMP TABLE sig_tasks AS
SELECT task_id FROM sig_trace_facts
UNION
SELECT task_id FROM sig_old WHERE trace_id IN (SELECT trace_id FROM sig_traces);

-- The requests rewritten: the touched traces, and the other requests of their tasks.
CREATE OR REPLACE TEMP TABLE sig_rewrite AS
SELECT trace_id FROM sig_trace_facts
UNION ALL
SELECT trace_id FROM sig_old
WHERE task_id IN (SELECT task_id FROM sig_tasks)
  AND trace_id NOT IN (SELECT trace_id FROM sig_trace_facts);

-- The rows of sig_old that the rows below replace: the touched traces' (however many requests a
-- trace was before: refresh-request-facts.ts) and their tasks' other requests, one row each.
DELETE FROM rollup.main.request_facts
WHERE end_ns >= {{old_lo_end_ns}} AND end_ns <= {{old_hi_end_ns}}
  AND ({{trace_key_filter}} OR {{task_key_filter}})
  AND (trace_id IN (SELECT trace_id FROM sig_trace_facts) OR task_id IN (SELECT task_id FROM sig_tasks));

-- Their rows, task columns included, straight into request_facts: a temp table of them first cost
-- as much as computing them (every column of every row written twice).
INSERT INTO rollup.main.request_facts BY NAME
WITH task_rows AS (
  SELECT * FROM sig_trace_facts
  UNION ALL BY NAME
  SELECT o.* EXCLUDE (
    is_final_attempt, is_task_last, task_start_ns, task_end_ns, task_requests, task_steps, task_declared_steps,
    task_complete, task_finals_ok, task_final_max_ttft_ms, task_final_max_e2e_ms
  )
  FROM sig_old o
  WHERE o.task_id IN (SELECT task_id FROM sig_tasks)
    AND o.trace_id NOT IN (SELECT trace_id FROM sig_trace_facts)
),
-- @include task-columns.sql
SELECT * FROM facts;

UPDATE rollup.main.request_facts_state SET
  last_rowid = {{hi_rowid}},
  fp_trace_id = (SELECT trace_id FROM span_store WHERE rowid = {{hi_rowid}}),
  fp_span_id = (SELECT span_id FROM span_store WHERE rowid = {{hi_rowid}}),
  newest_span_end_ns = greatest(newest_span_end_ns, {{max_end_ns}}),
  refreshed_at = now(),
  last_mode = '{{mode}}',
  last_traces_touched = (SELECT count(*) FROM sig_traces),
  last_requests_written = (SELECT count(*) FROM sig_rewrite),
  spans_remaining = {{spans_remaining}}
WHERE id = 1;

DROP TABLE sig_traces;
DROP TABLE sig_trace_facts;
DROP TABLE sig_old;
DROP TABLE sig_tasks;
DROP TABLE sig_rewrite;
COMMIT;
