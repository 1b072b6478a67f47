-- Oldest event time: the earliest span start the store holds — where its telemetry begins. A
-- control window reaching further back than that covers less than its length, and a rate over it
-- must be taken over what it covers (packages/control/src/observe-fleet.ts).
SELECT (SELECT min(start_ns) FROM span_store) AS span_ns
