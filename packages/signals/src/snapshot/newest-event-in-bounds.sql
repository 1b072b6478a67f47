-- Newest event time at or before $max_event_ns: the watermark of a store that holds rows dated
-- past the intake bound (written before the guard existed, or by a clock since corrected).
SELECT
  (SELECT max(end_ns) FROM span_store WHERE end_ns <= $max_event_ns) AS span_ns,
  (SELECT max(time_ns) FROM metric_store WHERE time_ns <= $max_event_ns) AS metric_ns
