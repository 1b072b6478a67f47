-- Requests (one per trace) that ended in ($from_ns, $to_ns] and match the filters, newest first.
WITH
-- @include ../snapshot/config-pools.sql
,
matched AS (
  SELECT
    r.* REPLACE (
      coalesce(r.model, c.model) AS model,
      coalesce(r.region, c.region) AS region,
      coalesce(r.gpu_type, c.gpu_type) AS gpu_type
    )
  FROM request_facts r
  LEFT JOIN cfg_pools c ON c.name = r.pool
  WHERE r.end_ns > $from_ns::BIGINT AND r.end_ns <= $to_ns::BIGINT
)
SELECT
  trace_id, root_span_id, name, service, has_root, start_ns, end_ns, e2e_ms, ttft_ms, server_ttft_ms,
  pool, model, region, gpu_type, replica, tenant, priority, workflow_type,
  task_id, workflow_id, conversation_id, workflow_step, workflow_steps, attempt, is_final_attempt,
  outcome, error_type, preempted, input_tokens, output_tokens, cached_tokens, cache_hit, cost_usd, span_count,
  hop_gateway_ms, hop_router_ms, hop_cache_ms, hop_queue_ms, hop_prefill_ms, hop_decode_ms, hop_stream_ms,
  hop_runtime_ms, hop_tool_ms, hop_other_ms
FROM matched
WHERE ($f_pool::VARCHAR IS NULL OR pool = $f_pool::VARCHAR)
  AND ($f_model::VARCHAR IS NULL OR model = $f_model::VARCHAR)
  AND ($f_region::VARCHAR IS NULL OR region = $f_region::VARCHAR)
  AND ($f_gpu_type::VARCHAR IS NULL OR gpu_type = $f_gpu_type::VARCHAR)
  AND ($f_tenant::VARCHAR IS NULL OR tenant = $f_tenant::VARCHAR)
  AND ($f_priority::VARCHAR IS NULL OR priority::VARCHAR = $f_priority::VARCHAR)
  AND ($f_workflow_type::VARCHAR IS NULL OR workflow_type = $f_workflow_type::VARCHAR)
  AND ($f_outcome::VARCHAR IS NULL OR outcome = $f_outcome::VARCHAR)
  AND ($f_task_id::VARCHAR IS NULL OR task_id = $f_task_id::VARCHAR)
  AND ($min_ms::DOUBLE IS NULL OR e2e_ms >= $min_ms::DOUBLE)
  AND ($max_ms::DOUBLE IS NULL OR e2e_ms <= $max_ms::DOUBLE)
ORDER BY end_ns DESC, trace_id
LIMIT $limit::BIGINT
