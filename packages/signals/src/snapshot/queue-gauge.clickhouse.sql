-- Fragment: requests waiting per (bucket, pool), the sum over the pool's series of each series' mean,
-- as queue_series/queue_gauge in pool-gauges.sql.
            SELECT bucket, pool, sum(waiting) AS queue_depth
            FROM (
              SELECT
                intDiv(time_ns - $from_ns - 1, $step_ns) AS bucket,
                pool,
                concat(ifNull(replica, ''), '|', ifNull(service, ''), '|', ifNull(attributes, '')) AS series,
                avg(value) AS waiting
              FROM {{database}}.metric_store FINAL
              WHERE name IN ('vllm:num_requests_waiting', 'sglang:num_queue_reqs') AND pool IS NOT NULL AND isFinite(value)
                AND time_ns > $from_ns AND time_ns <= $to_ns
              GROUP BY bucket, pool, series
            )
            GROUP BY bucket, pool
