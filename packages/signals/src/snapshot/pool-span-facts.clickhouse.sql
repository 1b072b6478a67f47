-- pool-span-facts.sql for ClickHouse: per (bucket, pool), the distinct replicas the window's
-- requests named and the dimensions they carried, for the pools not in $covered (an array). The
-- inner aggregates are m_… because ClickHouse's aliases are query-wide.
SELECT bucket, pool, count(replica) AS span_replicas, min(m_model) AS model, min(m_region) AS region,
  min(m_gpu_type) AS gpu_type
FROM (
  SELECT
    intDiv(end_ns - $from_ns - 1, $step_ns) AS bucket,
    pool,
    replica,
    min(model) AS m_model,
    min(region) AS m_region,
    min(gpu_type) AS m_gpu_type
  FROM {{database}}.request_facts FINAL
  WHERE deleted = 0 AND end_ns > $from_ns AND end_ns <= $to_ns
    AND start_ns >= $facts_from_ns AND start_ns <= $to_ns
    AND intDiv(start_ns, 60000000000) BETWEEN intDiv($facts_from_ns, 60000000000) AND intDiv($to_ns, 60000000000)
    AND (pool IS NULL OR NOT has($covered, assumeNotNull(pool)))
  GROUP BY bucket, pool, replica
)
GROUP BY bucket, pool
