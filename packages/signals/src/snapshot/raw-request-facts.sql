-- Replaces request_facts by the same facts computed from spans at query time (source 'raw': for
-- verification and the benchmark's raw-scan figure). Only spans starting in
-- [$scan_from_ns, $scan_to_ns] are read, so requests and tasks must fit in that range.
-- MATERIALIZED: the window queries inline their own CTEs (windowed-requests.sql), which would
-- otherwise recompute these facts from spans once per reference (a raw snapshot of a 5-minute
-- window by pool over 10M stored spans: 241 s inlined, 180 s materialized; one run each).
WITH
src_spans AS (
  SELECT * EXCLUDE (attributes, resource, events)
  FROM span_store
  WHERE start_ns >= $scan_from_ns::BIGINT AND start_ns <= $scan_to_ns::BIGINT
),
-- @include ../rollup/trace-facts.sql
,
task_rows AS (SELECT * FROM trace_facts),
-- @include ../rollup/task-columns.sql
,
request_facts AS MATERIALIZED (SELECT * FROM facts)
