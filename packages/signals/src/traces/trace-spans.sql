-- Every span of one trace; [$lo_ns, $hi_ns] bounds start_ns (from request_facts when the trace is
-- known there) so the scan only reads the row groups of that time.
SELECT
  span_id, parent_span_id, name, kind, service, hop, start_ns, end_ns, duration_ms, status_code, status_message,
  is_root, outcome, error_type, model, pool, region, gpu_type, replica, tenant, priority, attempt,
  workflow_id, workflow_step, first_token_ns, attributes::VARCHAR AS attributes, resource::VARCHAR AS resource,
  events::VARCHAR AS events, scope
FROM span_store
WHERE trace_id = $trace_id AND start_ns >= $lo_ns::BIGINT AND start_ns <= $hi_ns::BIGINT
ORDER BY start_ns, span_id
