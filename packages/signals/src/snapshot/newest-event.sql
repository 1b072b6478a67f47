-- Newest event time: the latest span end, else (no spans yet) the latest metric point.
SELECT
  (SELECT max(end_ns) FROM span_store) AS span_ns,
  (SELECT max(time_ns) FROM metric_store) AS metric_ns
