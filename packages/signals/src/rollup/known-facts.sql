-- What earlier refreshes wrote for the touched traces and the requests of their tasks: found by
-- integer keys (the caller fills in literal key lists). Narrow integer columns only: reading the
-- trace ids too doubles the scan, which covers every request row. Their end times bound the later
-- scans, which check trace ids.
SELECT trace_key, task_key, first_span_ns, last_span_ns, end_ns
FROM rollup.main.request_facts
WHERE trace_key IN ({{trace_keys}}) OR task_key IN ({{task_keys}})
