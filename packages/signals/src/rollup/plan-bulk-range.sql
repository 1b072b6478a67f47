-- For a large batch: the span range to re-read, covering the new spans and what earlier refreshes
-- saw of their traces.
WITH touched AS (
  SELECT DISTINCT trace_id
  FROM span_store
  WHERE rowid > $lo_rowid AND rowid <= $hi_rowid AND start_ns >= $min_start_ns
)
SELECT min(first_span_ns) AS lo_ns, max(last_span_ns) AS hi_ns
FROM request_facts
WHERE trace_id IN (SELECT trace_id FROM touched)
