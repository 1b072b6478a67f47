-- trace-request.sql for ClickHouse: the current request_facts row of one trace.
SELECT * FROM {{database}}.request_facts FINAL WHERE deleted = 0 AND trace_id = $trace_id
