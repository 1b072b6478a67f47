-- Brings request_facts up to date with span_store, in one transaction (readers never see a trace
-- half-updated). Spans appended since the last refresh are found by rowid — at most 2,000,000 per
-- run; the caller loops while spans_remaining > 0. DuckDB does not bind parameters in a
-- multi-statement script, so this one takes none: its state lives in request_facts_state.
BEGIN TRANSACTION;

CREATE OR REPLACE TEMP TABLE sig_bounds AS
SELECT
  'incremental' AS mode,
  st.last_rowid AS lo,
  least(agg.max_rowid, st.last_rowid + 2000000) AS hi,
  agg.max_rowid
FROM (SELECT last_rowid FROM request_facts_state WHERE id = 1) st,
     (SELECT coalesce(max(rowid), -1) AS max_rowid FROM span_store) agg;

CREATE OR REPLACE TEMP TABLE sig_new AS
SELECT trace_id, min(start_ns) AS lo_ns, max(start_ns) AS hi_ns, max(end_ns) AS max_end_ns
FROM span_store
WHERE rowid > (SELECT lo FROM sig_bounds) AND rowid <= (SELECT hi FROM sig_bounds)
GROUP BY trace_id;

-- @include recompute-traces.sql
