-- newest-event-in-bounds.sql for ClickHouse (NULL for no rows, as newest-event.clickhouse.sql).
SELECT
  (SELECT if(count() = 0, NULL, toNullable(max(end_ns))) FROM {{database}}.span_store WHERE end_ns <= $max_event_ns) AS span_ns,
  (SELECT if(count() = 0, NULL, toNullable(max(time_ns))) FROM {{database}}.metric_store WHERE time_ns <= $max_event_ns) AS metric_ns
