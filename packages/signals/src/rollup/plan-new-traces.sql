-- The traces those spans belong to, and the task ids their spans name (a trace's task is one of
-- these or the one an earlier refresh saw).
SELECT
  trace_id,
  (hash(trace_id) >> 1)::BIGINT AS trace_key,
  min(start_ns) AS lo_ns,
  max(start_ns) AS hi_ns,
  list(DISTINCT (hash(task_id) >> 1)::BIGINT) AS task_keys
FROM span_store
WHERE rowid > $lo_rowid AND rowid <= $hi_rowid AND start_ns >= $min_start_ns
GROUP BY trace_id
