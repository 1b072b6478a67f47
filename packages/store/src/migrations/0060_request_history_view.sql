-- Retention exports per-request rollups older than retention.rollups_ttl_hours to Parquet like raw
-- spans. request_history is request_facts plus that exported history (refreshHistoryViews redefines
-- it once files exist), and the requests and tasks views read it, so an exported request stays
-- queryable in SQL instead of vanishing from the views. Signals read request_facts directly: the
-- live window they compute is always inside the rollups' TTL.
CREATE OR REPLACE VIEW request_history AS SELECT * FROM request_facts;

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
FROM request_history;

CREATE OR REPLACE VIEW tasks AS
SELECT
  task_id,
  any_value(workflow_id) AS workflow_id,
  any_value(conversation_id) AS conversation_id,
  arg_max(workflow_type, end_ns) AS workflow_type,
  arg_max(tenant, end_ns) AS tenant,
  arg_max(priority, end_ns) AS priority,
  arg_max(pool, end_ns) AS pool,
  arg_max(model, end_ns) AS model,
  min(task_start_ns) AS start_ns,
  max(task_end_ns) AS end_ns,
  (max(task_end_ns) - min(task_start_ns)) / 1e6 AS e2e_ms,
  count(*) AS requests,
  count(*) FILTER (WHERE attempt > 1) AS retries,
  max(task_steps) AS steps,
  max(task_declared_steps) AS declared_steps,
  bool_and(task_complete) AS complete,
  bool_and(task_finals_ok) AS final_attempts_succeeded,
  CASE
    WHEN NOT bool_and(task_complete) THEN 'incomplete'
    WHEN bool_and(task_finals_ok) THEN 'success'
    ELSE 'failed'
  END AS outcome,
  max(task_final_max_ttft_ms) AS max_final_ttft_ms,
  max(task_final_max_e2e_ms) AS max_final_e2e_ms,
  sum(gpu_ms) AS gpu_ms,
  sum(input_tokens) AS input_tokens,
  sum(output_tokens) AS output_tokens,
  sum(cost_usd) AS explicit_cost_usd,
  list(DISTINCT pool ORDER BY pool) FILTER (WHERE pool IS NOT NULL) AS pools
FROM request_history
GROUP BY task_id;
