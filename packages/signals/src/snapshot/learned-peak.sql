-- Per pool: the learned peak throughput, p99 over one-minute buckets of generated tokens/s per
-- replica, over the history [$from_ns, $to_ns) ($step_ns = 1 minute). Replicas per minute come
-- from the replicas gauge, else from the distinct replicas seen in spans. Needs $min_minutes
-- minutes with traffic; otherwise the pool has no learned peak.
WITH
-- @include windowed-requests.sql
,
-- @include replica-gauge.sql
,
minute_usage AS (
  SELECT bucket, pool, sum(output_tokens) AS output_tokens, count(DISTINCT replica) AS span_replicas
  FROM win_requests
  WHERE pool IS NOT NULL
  GROUP BY bucket, pool
),
per_replica AS (
  SELECT
    u.pool,
    u.output_tokens / ($step_ns::BIGINT / 1e9)
      / CASE WHEN rt.replica_ns > 0 THEN rt.replica_ns / rt.covered_ns ELSE nullif(u.span_replicas, 0) END AS tokens_per_s_per_replica
  FROM minute_usage u
  LEFT JOIN replica_time rt ON rt.bucket = u.bucket AND rt.pool = u.pool
  WHERE u.output_tokens > 0
)
SELECT pool, quantile_cont(tokens_per_s_per_replica, 0.99) AS peak_tokens_per_s, count(*) AS minutes
FROM per_replica
WHERE tokens_per_s_per_replica IS NOT NULL
GROUP BY pool
HAVING count(*) >= $min_minutes
