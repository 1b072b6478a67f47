-- The requests view shows how many requests a head-sampled one stands for (sample_weight) and where
-- it went (endpoint): `sum(coalesce(sample_weight, 1))` counts the fleet's requests, not the sample's.
CREATE OR REPLACE VIEW requests AS
SELECT
  trace_id, root_span_id, name, service, has_root,
  start_ns, end_ns, e2e_ms, first_token_ns, ttft_ms, server_ttft_ms,
  pool, model, region, gpu_type, replica, tenant, priority, workflow_type,
  task_id, workflow_id, conversation_id, workflow_step, workflow_steps, attempt, is_final_attempt,
  outcome, error_type, preempted,
  input_tokens, output_tokens, cached_tokens, cache_hit, kv_usage, queue_depth,
  hop_queue_ms AS queue_ms, hop_prefill_ms AS prefill_ms, hop_decode_ms AS decode_ms,
  gpu_ms, cost_usd, span_count, first_span_ns, last_span_ns, sample_weight, endpoint,
  hop_gateway_ms, hop_router_ms, hop_cache_ms, hop_queue_ms, hop_prefill_ms, hop_decode_ms,
  hop_stream_ms, hop_runtime_ms, hop_tool_ms, hop_other_ms,
  ttft_hop_gateway_ms, ttft_hop_router_ms, ttft_hop_cache_ms, ttft_hop_queue_ms, ttft_hop_prefill_ms,
  ttft_hop_decode_ms, ttft_hop_stream_ms, ttft_hop_runtime_ms, ttft_hop_tool_ms, ttft_hop_other_ms
FROM request_facts;
