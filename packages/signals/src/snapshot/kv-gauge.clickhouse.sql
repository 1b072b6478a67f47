-- Fragment: KV-cache usage per (bucket, pool), as kv_gauge in pool-gauges.sql.
            SELECT intDiv(time_ns - $from_ns - 1, $step_ns) AS bucket, pool, avg(value) AS kv_usage
            FROM {{database}}.metric_store FINAL
            WHERE name IN ('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage',
                           'inference_pool_average_kv_cache_utilization')
              AND pool IS NOT NULL AND isFinite(value)
              AND time_ns > $from_ns AND time_ns <= $to_ns
            GROUP BY bucket, pool
