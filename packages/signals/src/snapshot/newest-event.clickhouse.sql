-- newest-event.sql for ClickHouse. max() over no rows is 0 there, not NULL: an empty table gives
-- NULL by its count, so "no data yet" stays distinguishable from an event at the epoch.
SELECT
  (SELECT if(count() = 0, NULL, toNullable(max(end_ns))) FROM {{database}}.span_store) AS span_ns,
  (SELECT if(count() = 0, NULL, toNullable(max(time_ns))) FROM {{database}}.metric_store) AS metric_ns
