-- newest-event.sql for ClickHouse, from the newest event of each insert that the materialized views
-- keep (span_newest, metric_newest: clickhouse-schema.ts), not a scan of the tables. max() over no
-- rows is 0 there, not NULL: an empty table gives NULL by its count, so "no data yet" stays
-- distinguishable from an event at the epoch.
SELECT
  (SELECT if(count() = 0, NULL, toNullable(max(newest_ns))) FROM {{database}}.span_newest) AS span_ns,
  (SELECT if(count() = 0, NULL, toNullable(max(newest_ns))) FROM {{database}}.metric_newest) AS metric_ns
