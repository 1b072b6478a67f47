-- What arrived since the last refresh: spans with rowid in ($lo_rowid, $hi_rowid] starting at or
-- after $min_start_ns (the catch-up horizon; the int64 minimum otherwise).
SELECT
  count(*) AS spans,
  count(DISTINCT trace_id) AS traces,
  min(start_ns) AS lo_ns,
  max(start_ns) AS hi_ns,
  max(end_ns) AS max_end_ns
FROM span_store
WHERE rowid > $lo_rowid AND rowid <= $hi_rowid AND start_ns >= $min_start_ns
