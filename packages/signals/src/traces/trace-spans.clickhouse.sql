-- trace-spans.sql for ClickHouse: every span of one trace, once — FINAL keeps one copy of a span
-- an export retried after a partly failed insert wrote twice (docs/scale-out.md).
SELECT
  span_id, parent_span_id, name, kind, service, hop, start_ns, end_ns, duration_ms, status_code, status_message,
  is_root, outcome, error_type, model, pool, region, gpu_type, replica, tenant, priority, attempt,
  workflow_id, workflow_step, first_token_ns, attributes, resource, events, scope
FROM {{database}}.span_store FINAL
WHERE trace_id = $trace_id AND start_ns >= $lo_ns AND start_ns <= $hi_ns
  AND intDiv(start_ns, 60000000000) BETWEEN intDiv($lo_ns, 60000000000) AND intDiv($hi_ns, 60000000000)
ORDER BY start_ns, span_id
