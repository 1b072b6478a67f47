-- What earlier refreshes wrote for the touched traces and the requests of their tasks: found by
-- integer keys (the caller fills in literal key lists; a few columns only, so the scan stays
-- cheap), checked against the trace ids by the caller. Their end times bound the later scans.
SELECT trace_id, task_key, first_span_ns, last_span_ns, end_ns
FROM request_facts
WHERE trace_key IN ({{trace_keys}}) OR task_key IN ({{task_keys}})
