-- Request-level signals per (bucket, group): counts, latency percentiles (exact, linear
-- interpolation), error/preemption/retry/cache rates, tokens and hop attribution.
-- Hop percentiles are over the requests that passed through the hop; hop shares are the mean over
-- requests of hop time ÷ the request's attributed time (absent hop = 0), so shares add up to 1.
WITH
-- @include windowed-requests.sql
,
with_totals AS (
  SELECT
    *,
    coalesce(hop_gateway_ms, 0) + coalesce(hop_router_ms, 0) + coalesce(hop_cache_ms, 0) + coalesce(hop_queue_ms, 0)
      + coalesce(hop_prefill_ms, 0) + coalesce(hop_decode_ms, 0) + coalesce(hop_stream_ms, 0)
      + coalesce(hop_runtime_ms, 0) + coalesce(hop_tool_ms, 0) + coalesce(hop_other_ms, 0) AS hop_total_ms,
    coalesce(ttft_hop_gateway_ms, 0) + coalesce(ttft_hop_router_ms, 0) + coalesce(ttft_hop_cache_ms, 0)
      + coalesce(ttft_hop_queue_ms, 0) + coalesce(ttft_hop_prefill_ms, 0) + coalesce(ttft_hop_decode_ms, 0)
      + coalesce(ttft_hop_stream_ms, 0) + coalesce(ttft_hop_runtime_ms, 0) + coalesce(ttft_hop_tool_ms, 0)
      + coalesce(ttft_hop_other_ms, 0) AS ttft_hop_total_ms,
    coalesce(cache_hit, cached_tokens > 0) AS cache_hit_known
  FROM keyed_requests
)
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type,
  count(*) AS requests,
  quantile_cont(ttft_ms, [0.5, 0.95, 0.99]) AS ttft_q,
  quantile_cont(server_ttft_ms, [0.5, 0.95, 0.99]) AS server_ttft_q,
  quantile_cont(e2e_ms, [0.5, 0.95, 0.99]) AS e2e_q,
  quantile_cont(hop_queue_ms, [0.5, 0.95, 0.99]) AS queue_q,
  count(*) FILTER (WHERE outcome NOT IN ('success', 'cancelled')) AS errors,
  count(*) FILTER (WHERE preempted) AS preempted,
  count(*) FILTER (WHERE attempt > 1) AS retries,
  count(*) FILTER (WHERE cache_hit_known) AS cache_hits,
  count(cache_hit_known) AS cache_known,
  sum(output_tokens) AS output_tokens,
  sum(input_tokens) AS input_tokens,
  avg(kv_usage) AS span_kv_usage,
  avg(queue_depth) AS span_queue_depth,
  quantile_cont(hop_gateway_ms, [0.5, 0.95]) AS hop_gateway_q,
  quantile_cont(hop_router_ms, [0.5, 0.95]) AS hop_router_q,
  quantile_cont(hop_cache_ms, [0.5, 0.95]) AS hop_cache_q,
  quantile_cont(hop_queue_ms, [0.5, 0.95]) AS hop_queue_q,
  quantile_cont(hop_prefill_ms, [0.5, 0.95]) AS hop_prefill_q,
  quantile_cont(hop_decode_ms, [0.5, 0.95]) AS hop_decode_q,
  quantile_cont(hop_stream_ms, [0.5, 0.95]) AS hop_stream_q,
  quantile_cont(hop_runtime_ms, [0.5, 0.95]) AS hop_runtime_q,
  quantile_cont(hop_tool_ms, [0.5, 0.95]) AS hop_tool_q,
  quantile_cont(hop_other_ms, [0.5, 0.95]) AS hop_other_q,
  avg(coalesce(hop_gateway_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_gateway_share,
  avg(coalesce(hop_router_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_router_share,
  avg(coalesce(hop_cache_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_cache_share,
  avg(coalesce(hop_queue_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_queue_share,
  avg(coalesce(hop_prefill_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_prefill_share,
  avg(coalesce(hop_decode_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_decode_share,
  avg(coalesce(hop_stream_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_stream_share,
  avg(coalesce(hop_runtime_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_runtime_share,
  avg(coalesce(hop_tool_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_tool_share,
  avg(coalesce(hop_other_ms, 0) / hop_total_ms) FILTER (WHERE hop_total_ms > 0) AS hop_other_share,
  avg(coalesce(ttft_hop_gateway_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_gateway_ttft_share,
  avg(coalesce(ttft_hop_router_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_router_ttft_share,
  avg(coalesce(ttft_hop_cache_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_cache_ttft_share,
  avg(coalesce(ttft_hop_queue_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_queue_ttft_share,
  avg(coalesce(ttft_hop_prefill_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_prefill_ttft_share,
  avg(coalesce(ttft_hop_decode_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_decode_ttft_share,
  avg(coalesce(ttft_hop_stream_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_stream_ttft_share,
  avg(coalesce(ttft_hop_runtime_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_runtime_ttft_share,
  avg(coalesce(ttft_hop_tool_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_tool_ttft_share,
  avg(coalesce(ttft_hop_other_ms, 0) / ttft_hop_total_ms) FILTER (WHERE ttft_hop_total_ms > 0) AS hop_other_ttft_share
FROM with_totals
GROUP BY bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type
