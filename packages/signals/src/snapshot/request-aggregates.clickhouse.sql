-- request-aggregates.sql for ClickHouse (18.16 and later): the same rows with the same meaning
-- (that file documents every column), without CTEs — the window's requests are a subquery
-- (window-keyed-requests.clickhouse.sql), and `$…` values are written in as literals
-- (packages/store/src/clickhouse/render-params.ts). The group cap as windowed-requests.clickhouse.sql applies it;
-- clickhouse-window-queries.ts loads the uncapped variant too.
-- ClickHouse's aliases are visible in the whole query: an aggregate named like a column (input_tokens)
-- would be read inside the next aggregate. So the aggregates are a_… here, renamed above.
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other, pool, in_filter,
  a_group_count AS group_count,
  a_requests AS requests,
  a_raw_requests AS raw_requests,
  a_sampled_requests AS sampled_requests,
  a_errors AS errors,
  a_overload_errors AS overload_errors,
  a_preempted AS preempted,
  a_retries AS retries,
  a_cache_hits AS cache_hits,
  a_cache_known AS cache_known,
  a_output_tokens AS output_tokens,
  a_input_tokens AS input_tokens,
  a_tokens AS tokens,
  a_gpu_ms AS gpu_ms,
  a_explicit_cost_usd AS explicit_cost_usd,
  a_kv_usage_sum AS kv_usage_sum,
  a_kv_usage_n AS kv_usage_n,
  a_queue_depth_sum AS queue_depth_sum,
  a_queue_depth_n AS queue_depth_n,
  a_share_n AS share_n,
  a_hop_gateway_share_sum AS hop_gateway_share_sum,
  a_hop_router_share_sum AS hop_router_share_sum,
  a_hop_cache_share_sum AS hop_cache_share_sum,
  a_hop_queue_share_sum AS hop_queue_share_sum,
  a_hop_prefill_share_sum AS hop_prefill_share_sum,
  a_hop_decode_share_sum AS hop_decode_share_sum,
  a_hop_stream_share_sum AS hop_stream_share_sum,
  a_hop_runtime_share_sum AS hop_runtime_share_sum,
  a_hop_tool_share_sum AS hop_tool_share_sum,
  a_hop_other_share_sum AS hop_other_share_sum,
  a_ttft_share_n AS ttft_share_n,
  a_hop_gateway_ttft_share_sum AS hop_gateway_ttft_share_sum,
  a_hop_router_ttft_share_sum AS hop_router_ttft_share_sum,
  a_hop_cache_ttft_share_sum AS hop_cache_ttft_share_sum,
  a_hop_queue_ttft_share_sum AS hop_queue_ttft_share_sum,
  a_hop_prefill_ttft_share_sum AS hop_prefill_ttft_share_sum,
  a_hop_decode_ttft_share_sum AS hop_decode_ttft_share_sum,
  a_hop_stream_ttft_share_sum AS hop_stream_ttft_share_sum,
  a_hop_runtime_ttft_share_sum AS hop_runtime_ttft_share_sum,
  a_hop_tool_ttft_share_sum AS hop_tool_ttft_share_sum,
  a_hop_other_ttft_share_sum AS hop_other_ttft_share_sum,
  a_tasks AS tasks,
  a_successful_tasks AS successful_tasks,
  a_good_tasks AS good_tasks,
  a_abandoned_tasks AS abandoned_tasks,
  a_pending_tasks AS pending_tasks
FROM (
  SELECT
    bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other, pool, in_filter,
    max(group_count) AS a_group_count,
    sum(w) AS a_requests,
    count() AS a_raw_requests,
    count(sample_weight) AS a_sampled_requests,
    sum((outcome NOT IN ('success', 'cancelled')) * w) AS a_errors,
    sum((outcome IN ('timeout', 'rejected')) * w) AS a_overload_errors,
    sum(preempted * w) AS a_preempted,
    sum((attempt > 1) * w) AS a_retries,
    sum(cache_hit_known * w) AS a_cache_hits,
    sum(if(cache_hit_known IS NOT NULL, w, NULL)) AS a_cache_known,
    sum(output_tokens * w) AS a_output_tokens,
    sum(input_tokens * w) AS a_input_tokens,
    sum((coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) * w) AS a_tokens,
    sum(gpu_ms * w) AS a_gpu_ms,
    sum(cost_usd * w) AS a_explicit_cost_usd,
    sum(kv_usage) AS a_kv_usage_sum,
    count(kv_usage) AS a_kv_usage_n,
    sum(queue_depth) AS a_queue_depth_sum,
    count(queue_depth) AS a_queue_depth_n,
    count(share_gateway) AS a_share_n,
    sum(share_gateway) AS a_hop_gateway_share_sum,
    sum(share_router) AS a_hop_router_share_sum,
    sum(share_cache) AS a_hop_cache_share_sum,
    sum(share_queue) AS a_hop_queue_share_sum,
    sum(share_prefill) AS a_hop_prefill_share_sum,
    sum(share_decode) AS a_hop_decode_share_sum,
    sum(share_stream) AS a_hop_stream_share_sum,
    sum(share_runtime) AS a_hop_runtime_share_sum,
    sum(share_tool) AS a_hop_tool_share_sum,
    sum(share_other) AS a_hop_other_share_sum,
    count(ttft_share_gateway) AS a_ttft_share_n,
    sum(ttft_share_gateway) AS a_hop_gateway_ttft_share_sum,
    sum(ttft_share_router) AS a_hop_router_ttft_share_sum,
    sum(ttft_share_cache) AS a_hop_cache_ttft_share_sum,
    sum(ttft_share_queue) AS a_hop_queue_ttft_share_sum,
    sum(ttft_share_prefill) AS a_hop_prefill_ttft_share_sum,
    sum(ttft_share_decode) AS a_hop_decode_ttft_share_sum,
    sum(ttft_share_stream) AS a_hop_stream_ttft_share_sum,
    sum(ttft_share_runtime) AS a_hop_runtime_ttft_share_sum,
    sum(ttft_share_tool) AS a_hop_tool_ttft_share_sum,
    sum(ttft_share_other) AS a_hop_other_ttft_share_sum,
    sum((is_task_last AND NOT task_pending) * w) AS a_tasks,
    sum((is_task_last AND task_complete AND task_finals_ok AND NOT task_pending) * w) AS a_successful_tasks,
    sum((is_task_last AND task_complete AND task_finals_ok AND task_in_slo AND NOT task_pending) * w) AS a_good_tasks,
    sum((is_task_last AND NOT task_complete AND NOT task_pending) * w) AS a_abandoned_tasks,
    sum((is_task_last AND task_pending) * w) AS a_pending_tasks
  FROM (
    SELECT
      *,
      (NOT task_complete OR (task_declared_steps IS NULL AND coalesce(workflow_id, conversation_id) IS NOT NULL))
        AND task_end_ns > $pending_after_ns AS task_pending,
      ($slo_ttft_ms IS NULL OR task_final_max_ttft_ms IS NULL OR task_final_max_ttft_ms <= $slo_ttft_ms)
        AND ($slo_e2e_ms IS NULL OR task_final_max_e2e_ms IS NULL OR task_final_max_e2e_ms <= $slo_e2e_ms) AS task_in_slo,
      coalesce(cache_hit, cached_tokens > 0) AS cache_hit_known,
      coalesce(sample_weight, 1.0) AS w
    FROM (
-- @include windowed-requests.clickhouse.sql
    )
  )
  GROUP BY bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other, pool, in_filter
)
