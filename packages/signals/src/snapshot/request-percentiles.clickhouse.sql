-- request-percentiles.sql for ClickHouse (18.16 and later): the same percentiles by the same
-- definition — DuckDB's quantile_cont, linear between the closest ranks at q·(n−1), over whole
-- nanoseconds — computed from each group's sorted values (groupArray skips NULLs), so both engines
-- give the same figures, not merely close ones (18.16's quantileExact returns the element at q·n).
-- A group without values gets an empty list where DuckDB gives NULL.
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other,
  arrayMap(q -> (s_ttft_q[toUInt64(floor(q * (length(s_ttft_q) - 1))) + 1] + (q * (length(s_ttft_q) - 1) - floor(q * (length(s_ttft_q) - 1))) * (s_ttft_q[toUInt64(ceil(q * (length(s_ttft_q) - 1))) + 1] - s_ttft_q[toUInt64(floor(q * (length(s_ttft_q) - 1))) + 1])) / 1e6, if(length(s_ttft_q) = 0, emptyArrayFloat64(), [0.5, 0.95, 0.99])) AS ttft_q,
  arrayMap(q -> (s_e2e_q[toUInt64(floor(q * (length(s_e2e_q) - 1))) + 1] + (q * (length(s_e2e_q) - 1) - floor(q * (length(s_e2e_q) - 1))) * (s_e2e_q[toUInt64(ceil(q * (length(s_e2e_q) - 1))) + 1] - s_e2e_q[toUInt64(floor(q * (length(s_e2e_q) - 1))) + 1])) / 1e6, if(length(s_e2e_q) = 0, emptyArrayFloat64(), [0.5, 0.95, 0.99])) AS e2e_q,
  arrayMap(q -> (s_queue_q[toUInt64(floor(q * (length(s_queue_q) - 1))) + 1] + (q * (length(s_queue_q) - 1) - floor(q * (length(s_queue_q) - 1))) * (s_queue_q[toUInt64(ceil(q * (length(s_queue_q) - 1))) + 1] - s_queue_q[toUInt64(floor(q * (length(s_queue_q) - 1))) + 1])) / 1e6, if(length(s_queue_q) = 0, emptyArrayFloat64(), [0.5, 0.95, 0.99])) AS queue_q,
  arrayMap(q -> (s_server_ttft_q[toUInt64(floor(q * (length(s_server_ttft_q) - 1))) + 1] + (q * (length(s_server_ttft_q) - 1) - floor(q * (length(s_server_ttft_q) - 1))) * (s_server_ttft_q[toUInt64(ceil(q * (length(s_server_ttft_q) - 1))) + 1] - s_server_ttft_q[toUInt64(floor(q * (length(s_server_ttft_q) - 1))) + 1])) / 1e6, if(length(s_server_ttft_q) = 0, emptyArrayFloat64(), [0.5, 0.95, 0.99])) AS server_ttft_q,
  arrayMap(q -> (s_task_e2e_q[toUInt64(floor(q * (length(s_task_e2e_q) - 1))) + 1] + (q * (length(s_task_e2e_q) - 1) - floor(q * (length(s_task_e2e_q) - 1))) * (s_task_e2e_q[toUInt64(ceil(q * (length(s_task_e2e_q) - 1))) + 1] - s_task_e2e_q[toUInt64(floor(q * (length(s_task_e2e_q) - 1))) + 1])) / 1e6, if(length(s_task_e2e_q) = 0, emptyArrayFloat64(), [0.5, 0.95, 0.99])) AS task_e2e_q,
  arrayMap(q -> (s_hop_gateway_q[toUInt64(floor(q * (length(s_hop_gateway_q) - 1))) + 1] + (q * (length(s_hop_gateway_q) - 1) - floor(q * (length(s_hop_gateway_q) - 1))) * (s_hop_gateway_q[toUInt64(ceil(q * (length(s_hop_gateway_q) - 1))) + 1] - s_hop_gateway_q[toUInt64(floor(q * (length(s_hop_gateway_q) - 1))) + 1])) / 1e6, if(length(s_hop_gateway_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_gateway_q,
  arrayMap(q -> (s_hop_router_q[toUInt64(floor(q * (length(s_hop_router_q) - 1))) + 1] + (q * (length(s_hop_router_q) - 1) - floor(q * (length(s_hop_router_q) - 1))) * (s_hop_router_q[toUInt64(ceil(q * (length(s_hop_router_q) - 1))) + 1] - s_hop_router_q[toUInt64(floor(q * (length(s_hop_router_q) - 1))) + 1])) / 1e6, if(length(s_hop_router_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_router_q,
  arrayMap(q -> (s_hop_cache_q[toUInt64(floor(q * (length(s_hop_cache_q) - 1))) + 1] + (q * (length(s_hop_cache_q) - 1) - floor(q * (length(s_hop_cache_q) - 1))) * (s_hop_cache_q[toUInt64(ceil(q * (length(s_hop_cache_q) - 1))) + 1] - s_hop_cache_q[toUInt64(floor(q * (length(s_hop_cache_q) - 1))) + 1])) / 1e6, if(length(s_hop_cache_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_cache_q,
  arrayMap(q -> (s_hop_prefill_q[toUInt64(floor(q * (length(s_hop_prefill_q) - 1))) + 1] + (q * (length(s_hop_prefill_q) - 1) - floor(q * (length(s_hop_prefill_q) - 1))) * (s_hop_prefill_q[toUInt64(ceil(q * (length(s_hop_prefill_q) - 1))) + 1] - s_hop_prefill_q[toUInt64(floor(q * (length(s_hop_prefill_q) - 1))) + 1])) / 1e6, if(length(s_hop_prefill_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_prefill_q,
  arrayMap(q -> (s_hop_decode_q[toUInt64(floor(q * (length(s_hop_decode_q) - 1))) + 1] + (q * (length(s_hop_decode_q) - 1) - floor(q * (length(s_hop_decode_q) - 1))) * (s_hop_decode_q[toUInt64(ceil(q * (length(s_hop_decode_q) - 1))) + 1] - s_hop_decode_q[toUInt64(floor(q * (length(s_hop_decode_q) - 1))) + 1])) / 1e6, if(length(s_hop_decode_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_decode_q,
  arrayMap(q -> (s_hop_stream_q[toUInt64(floor(q * (length(s_hop_stream_q) - 1))) + 1] + (q * (length(s_hop_stream_q) - 1) - floor(q * (length(s_hop_stream_q) - 1))) * (s_hop_stream_q[toUInt64(ceil(q * (length(s_hop_stream_q) - 1))) + 1] - s_hop_stream_q[toUInt64(floor(q * (length(s_hop_stream_q) - 1))) + 1])) / 1e6, if(length(s_hop_stream_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_stream_q,
  arrayMap(q -> (s_hop_runtime_q[toUInt64(floor(q * (length(s_hop_runtime_q) - 1))) + 1] + (q * (length(s_hop_runtime_q) - 1) - floor(q * (length(s_hop_runtime_q) - 1))) * (s_hop_runtime_q[toUInt64(ceil(q * (length(s_hop_runtime_q) - 1))) + 1] - s_hop_runtime_q[toUInt64(floor(q * (length(s_hop_runtime_q) - 1))) + 1])) / 1e6, if(length(s_hop_runtime_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_runtime_q,
  arrayMap(q -> (s_hop_tool_q[toUInt64(floor(q * (length(s_hop_tool_q) - 1))) + 1] + (q * (length(s_hop_tool_q) - 1) - floor(q * (length(s_hop_tool_q) - 1))) * (s_hop_tool_q[toUInt64(ceil(q * (length(s_hop_tool_q) - 1))) + 1] - s_hop_tool_q[toUInt64(floor(q * (length(s_hop_tool_q) - 1))) + 1])) / 1e6, if(length(s_hop_tool_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_tool_q,
  arrayMap(q -> (s_hop_other_q[toUInt64(floor(q * (length(s_hop_other_q) - 1))) + 1] + (q * (length(s_hop_other_q) - 1) - floor(q * (length(s_hop_other_q) - 1))) * (s_hop_other_q[toUInt64(ceil(q * (length(s_hop_other_q) - 1))) + 1] - s_hop_other_q[toUInt64(floor(q * (length(s_hop_other_q) - 1))) + 1])) / 1e6, if(length(s_hop_other_q) = 0, emptyArrayFloat64(), [0.5, 0.95])) AS hop_other_q
FROM (
  SELECT
    bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other,
    arraySort(groupArray(toInt64(round(ttft_ms * 1e6)))) AS s_ttft_q,
    arraySort(groupArray(toInt64(round(e2e_ms * 1e6)))) AS s_e2e_q,
    arraySort(groupArray(toInt64(round(hop_queue_ms * 1e6)))) AS s_queue_q,
    arraySort(groupArray(toInt64(round(server_ttft_ms * 1e6)))) AS s_server_ttft_q,
    arraySort(groupArray(if(is_task_last AND ((task_complete AND (task_declared_steps IS NOT NULL OR coalesce(workflow_id, conversation_id) IS NULL)) OR task_end_ns <= $pending_after_ns), task_end_ns - task_start_ns, NULL))) AS s_task_e2e_q,
    arraySort(groupArray(toInt64(round(hop_gateway_ms * 1e6)))) AS s_hop_gateway_q,
    arraySort(groupArray(toInt64(round(hop_router_ms * 1e6)))) AS s_hop_router_q,
    arraySort(groupArray(toInt64(round(hop_cache_ms * 1e6)))) AS s_hop_cache_q,
    arraySort(groupArray(toInt64(round(hop_prefill_ms * 1e6)))) AS s_hop_prefill_q,
    arraySort(groupArray(toInt64(round(hop_decode_ms * 1e6)))) AS s_hop_decode_q,
    arraySort(groupArray(toInt64(round(hop_stream_ms * 1e6)))) AS s_hop_stream_q,
    arraySort(groupArray(toInt64(round(hop_runtime_ms * 1e6)))) AS s_hop_runtime_q,
    arraySort(groupArray(toInt64(round(hop_tool_ms * 1e6)))) AS s_hop_tool_q,
    arraySort(groupArray(toInt64(round(hop_other_ms * 1e6)))) AS s_hop_other_q
  FROM (
-- @include windowed-requests.clickhouse.sql
  )
  WHERE in_filter
  GROUP BY bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type, k_other
)
