-- What earlier refreshes wrote for the touched traces and the requests of their tasks, ending at or
-- after the given end time (reachBack in refresh-request-facts.ts): found by integer keys (the caller
-- fills in literal key lists). Narrow integer columns only: reading the trace ids too doubles the
-- scan. The end-time bound skips the row groups of older requests. Their end times bound the later
-- scans, which check trace ids; their tasks' starts say how far back the next round looks.
SELECT trace_key, task_key, first_span_ns, last_span_ns, end_ns, task_start_ns
FROM rollup.main.request_facts
WHERE end_ns >= {{lo_end_ns}} AND (trace_key IN ({{trace_keys}}) OR task_key IN ({{task_keys}}))
