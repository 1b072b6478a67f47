-- The other half of the percentiles per (bucket, group), a query of its own so the two halves of
-- the sorting run in parallel: server TTFT, task e2e (tasks counted as in request-aggregates.sql),
-- and p50/p95 of each hop's time over the requests that passed through it (the queue hop's are
-- queue_q of request-aggregates.sql).
WITH
-- @include windowed-requests.sql
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type,
  quantile_cont(server_ttft_ms, [0.5, 0.95, 0.99]) AS server_ttft_q,
  quantile_cont(
    CASE
      WHEN is_task_last AND (task_complete OR task_end_ns <= $pending_after_ns::BIGINT)
      THEN (task_end_ns - task_start_ns) / 1e6
    END,
    [0.5, 0.95, 0.99]
  ) AS task_e2e_q,
  quantile_cont(hop_gateway_ms, [0.5, 0.95]) AS hop_gateway_q,
  quantile_cont(hop_router_ms, [0.5, 0.95]) AS hop_router_q,
  quantile_cont(hop_cache_ms, [0.5, 0.95]) AS hop_cache_q,
  quantile_cont(hop_prefill_ms, [0.5, 0.95]) AS hop_prefill_q,
  quantile_cont(hop_decode_ms, [0.5, 0.95]) AS hop_decode_q,
  quantile_cont(hop_stream_ms, [0.5, 0.95]) AS hop_stream_q,
  quantile_cont(hop_runtime_ms, [0.5, 0.95]) AS hop_runtime_q,
  quantile_cont(hop_tool_ms, [0.5, 0.95]) AS hop_tool_q,
  quantile_cont(hop_other_ms, [0.5, 0.95]) AS hop_other_q
FROM keyed_requests
GROUP BY bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type
