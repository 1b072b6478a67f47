-- The request_facts row of one trace: its summary and where its spans lie in time.
SELECT * FROM request_facts WHERE trace_id = $trace_id
