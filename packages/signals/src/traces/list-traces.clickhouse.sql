-- list-traces.sql for ClickHouse: the same rows. Dimensions a request lacks come from its pool's
-- config entry ($cfg_* arrays aligned with $cfg_names); they are d_… inside, since a ClickHouse
-- alias named like a column (model) would replace that column in the whole query.
SELECT
  trace_id, root_span_id, name, service, has_root, start_ns, end_ns, e2e_ms, ttft_ms, server_ttft_ms,
  pool, d_model AS model, d_region AS region, d_gpu_type AS gpu_type, replica, tenant, priority, workflow_type,
  task_id, workflow_id, conversation_id, workflow_step, workflow_steps, attempt, is_final_attempt,
  outcome, error_type, preempted, input_tokens, output_tokens, cached_tokens, cache_hit, cost_usd, span_count,
  hop_gateway_ms, hop_router_ms, hop_cache_ms, hop_queue_ms, hop_prefill_ms, hop_decode_ms, hop_stream_ms,
  hop_runtime_ms, hop_tool_ms, hop_other_ms
FROM (
  SELECT
    trace_id, root_span_id, name, service, has_root, start_ns, end_ns, e2e_ms, ttft_ms, server_ttft_ms,
    pool, replica, tenant, priority, workflow_type,
    task_id, workflow_id, conversation_id, workflow_step, workflow_steps, attempt, is_final_attempt,
    outcome, error_type, preempted, input_tokens, output_tokens, cached_tokens, cache_hit, cost_usd, span_count,
    hop_gateway_ms, hop_router_ms, hop_cache_ms, hop_queue_ms, hop_prefill_ms, hop_decode_ms, hop_stream_ms,
    hop_runtime_ms, hop_tool_ms, hop_other_ms,
    indexOf($cfg_names, ifNull(pool, '')) AS cfg_index,
    coalesce(model, if(cfg_index = 0, NULL, arrayElement($cfg_models, cfg_index))) AS d_model,
    coalesce(region, if(cfg_index = 0, NULL, arrayElement($cfg_regions, cfg_index))) AS d_region,
    coalesce(gpu_type, if(cfg_index = 0, NULL, arrayElement($cfg_gpu_types, cfg_index))) AS d_gpu_type
  FROM {{database}}.request_facts FINAL
  WHERE deleted = 0 AND end_ns > $from_ns AND end_ns <= $to_ns
    AND start_ns >= $facts_from_ns AND start_ns <= $to_ns
    AND intDiv(start_ns, 60000000000) BETWEEN intDiv($facts_from_ns, 60000000000) AND intDiv($to_ns, 60000000000)
)
WHERE ifNull(
    ($f_pool IS NULL OR pool = $f_pool)
      AND ($f_model IS NULL OR d_model = $f_model)
      AND ($f_region IS NULL OR d_region = $f_region)
      AND ($f_gpu_type IS NULL OR d_gpu_type = $f_gpu_type)
      AND ($f_tenant IS NULL OR tenant = $f_tenant)
      AND ($f_priority IS NULL OR toString(priority) = $f_priority)
      AND ($f_workflow_type IS NULL OR workflow_type = $f_workflow_type)
      AND ($f_outcome IS NULL OR outcome = $f_outcome)
      AND ($f_task_id IS NULL OR task_id = $f_task_id)
      AND ($min_ms IS NULL OR e2e_ms >= $min_ms)
      AND ($max_ms IS NULL OR e2e_ms <= $max_ms),
    0
  )
ORDER BY end_ns DESC, trace_id
LIMIT $limit
