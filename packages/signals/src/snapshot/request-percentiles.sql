-- Exact percentiles per (bucket, group) (linear interpolation between closest ranks, DuckDB
-- quantile_cont): TTFT, e2e, queue, server TTFT, task e2e (tasks counted as in
-- request-aggregates.sql), and p50/p95 of each hop's time over the requests that passed through it
-- (the queue hop's are queue_q). Taken over whole nanoseconds, the resolution of span timestamps:
-- DuckDB selects ranks among integers about twice as fast as among doubles. TRY_CAST leaves out
-- values beyond ±292 years instead of failing the query (only garbage attributes get there).
WITH
-- @include windowed-requests.sql
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other,
  list_transform(quantile_cont(TRY_CAST(ttft_ms * 1e6 AS BIGINT), [0.5, 0.95, 0.99]), v -> v / 1e6) AS ttft_q,
  list_transform(quantile_cont(TRY_CAST(e2e_ms * 1e6 AS BIGINT), [0.5, 0.95, 0.99]), v -> v / 1e6) AS e2e_q,
  list_transform(quantile_cont(TRY_CAST(hop_queue_ms * 1e6 AS BIGINT), [0.5, 0.95, 0.99]), v -> v / 1e6) AS queue_q,
  list_transform(quantile_cont(TRY_CAST(server_ttft_ms * 1e6 AS BIGINT), [0.5, 0.95, 0.99]), v -> v / 1e6) AS server_ttft_q,
  list_transform(
    quantile_cont(
      CASE
        WHEN is_task_last AND ((task_complete AND (task_declared_steps IS NOT NULL OR coalesce(workflow_id, conversation_id) IS NULL)) OR task_end_ns <= $pending_after_ns::BIGINT)
        THEN task_end_ns - task_start_ns
      END,
      [0.5, 0.95, 0.99]
    ),
    v -> v / 1e6
  ) AS task_e2e_q,
  list_transform(quantile_cont(TRY_CAST(hop_gateway_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_gateway_q,
  list_transform(quantile_cont(TRY_CAST(hop_router_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_router_q,
  list_transform(quantile_cont(TRY_CAST(hop_cache_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_cache_q,
  list_transform(quantile_cont(TRY_CAST(hop_prefill_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_prefill_q,
  list_transform(quantile_cont(TRY_CAST(hop_decode_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_decode_q,
  list_transform(quantile_cont(TRY_CAST(hop_stream_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_stream_q,
  list_transform(quantile_cont(TRY_CAST(hop_runtime_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_runtime_q,
  list_transform(quantile_cont(TRY_CAST(hop_tool_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_tool_q,
  list_transform(quantile_cont(TRY_CAST(hop_other_ms * 1e6 AS BIGINT), [0.5, 0.95]), v -> v / 1e6) AS hop_other_q
FROM keyed_requests
GROUP BY bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other
