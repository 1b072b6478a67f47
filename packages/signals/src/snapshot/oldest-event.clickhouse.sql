-- oldest-event.sql for ClickHouse. min() over no rows is 0 there, not NULL: an empty table gives
-- NULL by its count, so "no data yet" stays distinguishable from an event at the epoch. It reads one
-- column of every part; the control loop asks only until its window lies inside what the store holds.
SELECT (SELECT if(count() = 0, NULL, toNullable(min(start_ns))) FROM {{database}}.span_store) AS span_ns
