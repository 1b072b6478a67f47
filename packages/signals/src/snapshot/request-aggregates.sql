-- Request- and task-level counts and sums per (bucket, group, pool, in_filter), over every request
-- of the window. window-rows.ts adds them up three ways: over pools (in_filter rows) for the
-- group's figures; per pool (in_filter rows) for what the group used of each pool — the basis for
-- allocating the pool's cost (GPU time, else tokens, else request count); over groups (all rows)
-- for what each pool served (its gauges are read in pool-gauges.sql, the replicas and dimensions its
-- requests named in pool-span-facts.sql). One scan serves all three, so averages come as sums and
-- counts.
-- The percentiles are in request-percentiles.sql (run in parallel with this query). Groups past the
-- cap come as one `k_other` group (windowed-requests.sql).
--
-- Sampling: a request kept by head sampling stands for `w` = 1 ÷ its sampling probability requests
-- (sample_weight; 1 when unsampled), so counts, tokens and GPU time are sums of w and the rates stay
-- the fleet's, not the sample's. `sampled` counts the requests that carried a weight, `raw_requests`
-- the requests stored.
--
-- Hops: shares are the mean over requests of the hop's share of the request's attributed time
-- (absent hop = 0), so they add up to 1. A request's shares are all NULL or none is (NULL without
-- attributed time), so one count per kind of share is their denominator.
--
-- Tasks: a task is counted in the window and group of its last request (is_task_last), i.e. the
-- window in which it ENDED. It succeeded when it is complete (every declared workflow step seen) and
-- the final attempt of each step succeeded; it is good (goodput) when it also met the SLO on every
-- final attempt (TTFT ≤ $slo_ttft_ms where a first token is known, e2e ≤ $slo_e2e_ms). An incomplete
-- task, or a workflow/conversation without a declared step count, that ended after $pending_after_ns
-- (newest event − lateness) may still get its next step: it is pending and not counted yet; an older
-- incomplete task was abandoned and counts as failed.
WITH
-- @include windowed-requests.sql
,
flagged AS (
  SELECT
    *,
    -- A workflow or conversation that declares no step count may still get its next step: it is
    -- pending until it has been quiet past the horizon, not a success when its first step succeeded.
    (NOT task_complete OR (task_declared_steps IS NULL AND coalesce(workflow_id, conversation_id) IS NOT NULL))
      AND task_end_ns > $pending_after_ns::BIGINT AS task_pending,
    ($slo_ttft_ms::DOUBLE IS NULL OR task_final_max_ttft_ms IS NULL OR task_final_max_ttft_ms <= $slo_ttft_ms::DOUBLE)
      AND ($slo_e2e_ms::DOUBLE IS NULL OR task_final_max_e2e_ms IS NULL OR task_final_max_e2e_ms <= $slo_e2e_ms::DOUBLE) AS task_in_slo,
    coalesce(cache_hit, cached_tokens > 0) AS cache_hit_known,
    coalesce(sample_weight, 1.0) AS w
  FROM keyed_all
)
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other, pool, in_filter,
  max(group_count) AS group_count,
  sum(w) AS requests,
  count(*) AS raw_requests,
  count(sample_weight) AS sampled_requests,
  -- sum of casts: several times cheaper in DuckDB than count(*) FILTER (…)
  sum((outcome NOT IN ('success', 'cancelled'))::INTEGER * w) AS errors,
  sum((outcome IN ('timeout', 'rejected'))::INTEGER * w) AS overload_errors,
  sum(preempted::INTEGER * w) AS preempted,
  sum((attempt > 1)::INTEGER * w) AS retries,
  sum(cache_hit_known::INTEGER * w) AS cache_hits,
  sum(CASE WHEN cache_hit_known IS NOT NULL THEN w END) AS cache_known,
  sum(output_tokens * w) AS output_tokens,
  sum(input_tokens * w) AS input_tokens,
  sum((coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) * w) AS tokens,
  sum(gpu_ms * w) AS gpu_ms,
  sum(cost_usd * w) AS explicit_cost_usd,
  sum(kv_usage) AS kv_usage_sum,
  count(kv_usage) AS kv_usage_n,
  sum(queue_depth) AS queue_depth_sum,
  count(queue_depth) AS queue_depth_n,
  count(share_gateway) AS share_n,
  sum(share_gateway) AS hop_gateway_share_sum,
  sum(share_router) AS hop_router_share_sum,
  sum(share_cache) AS hop_cache_share_sum,
  sum(share_queue) AS hop_queue_share_sum,
  sum(share_prefill) AS hop_prefill_share_sum,
  sum(share_decode) AS hop_decode_share_sum,
  sum(share_stream) AS hop_stream_share_sum,
  sum(share_runtime) AS hop_runtime_share_sum,
  sum(share_tool) AS hop_tool_share_sum,
  sum(share_other) AS hop_other_share_sum,
  count(ttft_share_gateway) AS ttft_share_n,
  sum(ttft_share_gateway) AS hop_gateway_ttft_share_sum,
  sum(ttft_share_router) AS hop_router_ttft_share_sum,
  sum(ttft_share_cache) AS hop_cache_ttft_share_sum,
  sum(ttft_share_queue) AS hop_queue_ttft_share_sum,
  sum(ttft_share_prefill) AS hop_prefill_ttft_share_sum,
  sum(ttft_share_decode) AS hop_decode_ttft_share_sum,
  sum(ttft_share_stream) AS hop_stream_ttft_share_sum,
  sum(ttft_share_runtime) AS hop_runtime_ttft_share_sum,
  sum(ttft_share_tool) AS hop_tool_ttft_share_sum,
  sum(ttft_share_other) AS hop_other_ttft_share_sum,
  sum((is_task_last AND NOT task_pending)::INTEGER * w) AS tasks,
  sum((is_task_last AND task_complete AND task_finals_ok AND NOT task_pending)::INTEGER * w) AS successful_tasks,
  sum((is_task_last AND task_complete AND task_finals_ok AND task_in_slo AND NOT task_pending)::INTEGER * w) AS good_tasks,
  sum((is_task_last AND NOT task_complete AND NOT task_pending)::INTEGER * w) AS abandoned_tasks,
  sum((is_task_last AND task_pending)::INTEGER * w) AS pending_tasks
FROM flagged
GROUP BY bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other, pool, in_filter
