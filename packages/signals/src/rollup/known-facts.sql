-- What earlier refreshes saw of the touched traces: looked up by integer key (the caller fills in a
-- literal list of keys) and checked against the trace ids by the caller.
SELECT trace_id, first_span_ns, last_span_ns, task_key
FROM request_facts
WHERE trace_key IN ({{trace_keys}})
