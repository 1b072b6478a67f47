-- 1 when the span recorded at the last refreshed rowid still sits there (rowids have not moved).
SELECT count(*) AS n
FROM span_store
WHERE rowid = $last_rowid AND trace_id = $fp_trace_id AND span_id = $fp_span_id
