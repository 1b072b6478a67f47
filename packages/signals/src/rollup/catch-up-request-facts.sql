-- Run instead of refresh-request-facts.sql when rowids moved (retention deleted spans and a
-- checkpoint compacted span_store), so "appended since the last refresh" cannot be told by rowid:
-- recompute every trace with a span in the last hour of event time before the newest span seen,
-- then continue incrementally from the current end of span_store. Facts of older traces are kept.
BEGIN TRANSACTION;

CREATE OR REPLACE TEMP TABLE sig_bounds AS
SELECT
  'catch-up' AS mode,
  -1 AS lo,
  agg.max_rowid AS hi,
  agg.max_rowid,
  coalesce(st.newest_span_end_ns, 0) - 3600000000000 AS horizon_ns
FROM (SELECT newest_span_end_ns FROM request_facts_state WHERE id = 1) st,
     (SELECT coalesce(max(rowid), -1) AS max_rowid FROM span_store) agg;

CREATE OR REPLACE TEMP TABLE sig_new AS
SELECT trace_id, min(start_ns) AS lo_ns, max(start_ns) AS hi_ns, max(end_ns) AS max_end_ns
FROM span_store
WHERE start_ns >= (SELECT horizon_ns FROM sig_bounds) AND rowid <= (SELECT hi FROM sig_bounds)
GROUP BY trace_id;

-- @include recompute-traces.sql
