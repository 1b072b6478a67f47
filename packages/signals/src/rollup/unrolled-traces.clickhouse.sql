-- Traces with spans starting in ($from_ns, $to_ns] whose current request facts do not count every
-- one of their spans: spans a node acknowledged but did not roll up (it died first, or a late span
-- reached it after its rollup moved on), for the leader's repair sweep (clickhouse-repair-sweep.ts).
-- A trace's spans and its facts share a shard (both sharded by trace id); its spans are counted
-- within $margin_ns of the range, the facts of requests starting from $margin_ns before it.
-- No facts: the LEFT JOIN's default 0 differs from any span count. Pages by trace id ($after: the
-- last of the previous page, '' for the first).
SELECT trace_id
FROM (
  SELECT trace_id, uniqExact(span_id) AS n_spans
  FROM {{database}}.span_store
  WHERE start_ns > $from_ns - $margin_ns AND start_ns <= $to_ns + $margin_ns
    AND intDiv(start_ns, 60000000000) BETWEEN intDiv($from_ns - $margin_ns, 60000000000) AND intDiv($to_ns + $margin_ns, 60000000000)
    AND trace_id GLOBAL IN (
      SELECT trace_id FROM {{database}}.span_store WHERE start_ns > $from_ns AND start_ns <= $to_ns
        AND intDiv(start_ns, 60000000000) BETWEEN intDiv($from_ns, 60000000000) AND intDiv($to_ns, 60000000000)
    )
  GROUP BY trace_id
)
GLOBAL ANY LEFT JOIN (
  SELECT trace_id, toUInt64(sum(span_count)) AS n_facts
  FROM {{database}}.request_facts FINAL
  WHERE deleted = 0 AND start_ns > $from_ns - 2 * $margin_ns AND start_ns <= $to_ns + $margin_ns
    AND intDiv(start_ns, 60000000000) BETWEEN intDiv($from_ns - 2 * $margin_ns, 60000000000) AND intDiv($to_ns + $margin_ns, 60000000000)
  GROUP BY trace_id
) USING trace_id
WHERE n_facts != n_spans AND trace_id > $after
ORDER BY trace_id
LIMIT $limit
