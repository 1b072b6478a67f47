-- Fragment (CTEs): one row per trace from the spans in relation `src_spans`, which must hold every
-- span of each trace it mentions. Defines `trace_facts` with the columns of request_facts except
-- the task_* columns (see task-columns.sql).
--
-- Request = trace. Its root is the span without a parent (else, while the root has not arrived,
-- the earliest span). Pool, replica, GPU type and region are those of the runtime that served the
-- request (the runtime-side span that ended last: the final attempt, the decode side under
-- prefill/decode disaggregation), never the root's, which is a gateway's; other dimensions come from
-- the root, else a runtime-side span, else any span. The outcome is the root's unless the root says
-- success and the final attempt (runtime span or client call) failed, as a stream that broke after
-- its 200 did. TTFT is the first token as the client saw it: a span that reports the client's time to
-- first chunk, else the final runtime's first token, else the earliest first token in the trace;
-- minus the root's start. Hop times are each
-- span's self time (its interval minus the union of its children's intervals), every interval
-- clipped to the root's interval and to its parent's, so clock skew between hops (a child starting
-- before its parent) never yields negative time and the hop times of a well-nested trace add up to
-- its e2e latency.
--
-- Every choice between spans is by their content, so the same telemetry under other trace and span
-- ids gives the same facts: the root ranks by start, then end, name and service (ids last, for spans
-- alike in all of these); "the span that ended last" breaks a tie by the larger value; a fallback
-- over any span takes the smallest value, not whichever row was read first.

-- OTLP exporters retry, so a span may be delivered twice; keep one copy. Only the few repeated
-- spans are ranked: a window (or an aggregate) over every whole span row cost a sixth of the query.
repeated AS (
  SELECT trace_id, span_id FROM src_spans GROUP BY trace_id, span_id HAVING count(*) > 1
),
dedup AS (
  SELECT s.* FROM src_spans s ANTI JOIN repeated r ON r.trace_id = s.trace_id AND r.span_id = s.span_id
  UNION ALL
  SELECT * FROM (
    SELECT s.* FROM src_spans s SEMI JOIN repeated r ON r.trace_id = s.trace_id AND r.span_id = s.span_id
  )
  QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_ns DESC) = 1
),
-- Each trace's root (first in this order), ranked on the ordering columns alone: a window over
-- whole span rows costs several times more.
root_ids AS (
  SELECT trace_id, span_id
  FROM (SELECT trace_id, span_id, is_root, start_ns, end_ns, name, service FROM dedup)
  QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY is_root DESC, start_ns, end_ns DESC, name, service, span_id) = 1
),
ranked AS (
  SELECT s.*, r.span_id IS NOT NULL AS is_first
  FROM dedup s
  LEFT JOIN root_ids r ON r.trace_id = s.trace_id AND r.span_id = s.span_id
),
-- "The span that ended last" among those a column is chosen from, as its end time; trace_agg takes
-- the largest value among the spans that ended then. Two passes of plain max() give what
-- arg_max(value, (end_ns, value)) gives, at a fraction of its cost (a struct-keyed arg_max is
-- about ten times dearer than max, and a trace needs a dozen of them).
last_ends AS (
  SELECT
    trace_id,
    max(end_ns) FILTER (WHERE ttft_ms IS NOT NULL AND first_token_ns IS NOT NULL) AS client_ft_end,
    max(end_ns) FILTER (WHERE hop IN ('runtime', 'prefill', 'decode') AND first_token_ns IS NOT NULL) AS runtime_ft_end,
    max(end_ns) FILTER (WHERE server_ttft_ms IS NOT NULL) AS server_ttft_end,
    max(end_ns) FILTER (WHERE hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND pool IS NOT NULL) AS pool_end,
    max(end_ns) FILTER (WHERE hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND region IS NOT NULL) AS region_end,
    max(end_ns) FILTER (WHERE hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND gpu_type IS NOT NULL) AS gpu_type_end,
    max(end_ns) FILTER (WHERE hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND replica IS NOT NULL) AS replica_end,
    max(end_ns) FILTER (WHERE NOT is_first AND (hop IN ('runtime', 'prefill', 'decode') OR kind = 3)) AS outcome_end,
    max(end_ns) FILTER (WHERE hop IN ('runtime', 'prefill', 'decode') AND endpoint IS NOT NULL) AS runtime_endpoint_end,
    max(end_ns) FILTER (WHERE kind = 3 AND endpoint IS NOT NULL) AS client_endpoint_end,
    max(end_ns) FILTER (WHERE endpoint IS NOT NULL) AS endpoint_end
  FROM ranked
  GROUP BY trace_id
),
trace_agg AS (
  SELECT
    s.trace_id,
    bool_or(s.is_root) AS has_root,
    min(s.start_ns) AS first_span_ns,
    max(s.end_ns) AS last_span_ns,
    max(s.first_token_ns) FILTER (WHERE s.ttft_ms IS NOT NULL AND s.first_token_ns IS NOT NULL AND s.end_ns = e.client_ft_end) AS client_first_token_ns,
    max(s.first_token_ns) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode') AND s.first_token_ns IS NOT NULL AND s.end_ns = e.runtime_ft_end) AS runtime_first_token_ns,
    min(s.first_token_ns) AS min_first_token_ns,
    max(s.server_ttft_ms) FILTER (WHERE s.server_ttft_ms IS NOT NULL AND s.end_ns = e.server_ttft_end) AS server_ttft_ms,
    max(s.pool) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND s.pool IS NOT NULL AND s.end_ns = e.pool_end) AS runtime_pool,
    min(s.pool) AS min_pool,
    min(s.model) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode', 'scheduler')) AS runtime_model,
    min(s.model) AS min_model,
    max(s.region) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND s.region IS NOT NULL AND s.end_ns = e.region_end) AS runtime_region,
    min(s.region) AS min_region,
    max(s.gpu_type) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND s.gpu_type IS NOT NULL AND s.end_ns = e.gpu_type_end) AS runtime_gpu_type,
    min(s.gpu_type) AS min_gpu_type,
    min(s.tenant) AS min_tenant,
    min(s.priority) AS min_priority,
    min(s.workflow_type) AS min_workflow_type,
    max(s.replica) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode', 'scheduler') AND s.replica IS NOT NULL AND s.end_ns = e.replica_end) AS runtime_replica,
    min(s.replica) AS min_replica,
    min(s.workflow_id) AS min_workflow_id,
    min(s.conversation_id) AS min_conversation_id,
    min(s.workflow_step) AS min_workflow_step,
    max(s.workflow_steps) AS max_workflow_steps,
    max(s.attempt) AS max_attempt,
    max(s.outcome) FILTER (WHERE NOT s.is_first AND (s.hop IN ('runtime', 'prefill', 'decode') OR s.kind = 3) AND s.end_ns = e.outcome_end) AS final_outcome,
    min(s.error_type) AS min_error_type,
    bool_or(s.outcome = 'preempted') AS preempted,
    max(s.input_tokens) AS max_input_tokens,
    max(s.output_tokens) AS max_output_tokens,
    max(s.cached_tokens) AS max_cached_tokens,
    bool_or(s.cache_hit) AS cache_hit,
    avg(s.kv_usage) AS kv_usage,
    max(s.queue_depth) AS queue_depth,
    coalesce(
      sum(s.duration_ms) FILTER (WHERE s.hop = 'runtime'),
      sum(s.duration_ms) FILTER (WHERE s.hop IN ('prefill', 'decode'))
    ) AS gpu_ms,
    sum(s.cost_usd) AS cost_usd,
    max(s.sample_weight) AS max_sample_weight,
    coalesce(
      max(s.endpoint) FILTER (WHERE s.hop IN ('runtime', 'prefill', 'decode') AND s.endpoint IS NOT NULL AND s.end_ns = e.runtime_endpoint_end),
      max(s.endpoint) FILTER (WHERE s.kind = 3 AND s.endpoint IS NOT NULL AND s.end_ns = e.client_endpoint_end),
      max(s.endpoint) FILTER (WHERE s.endpoint IS NOT NULL AND s.end_ns = e.endpoint_end)
    ) AS endpoint,
    count(*)::INTEGER AS span_count
  FROM ranked s
  JOIN last_ends e USING (trace_id)
  GROUP BY s.trace_id
),
trace_dims AS (
  -- The root's own values first, then the fallbacks over the trace's spans.
  SELECT
    a.trace_id,
    r.span_id AS root_span_id,
    r.name,
    r.service,
    a.has_root,
    r.start_ns AS r_start,
    greatest(r.end_ns, r.start_ns) AS r_end,
    a.first_span_ns,
    a.last_span_ns,
    coalesce(a.client_first_token_ns, a.runtime_first_token_ns, a.min_first_token_ns) AS first_token_ns,
    a.server_ttft_ms,
    coalesce(a.runtime_pool, r.pool, a.min_pool) AS pool,
    coalesce(r.model, a.runtime_model, a.min_model) AS model,
    coalesce(a.runtime_region, r.region, a.min_region) AS region,
    coalesce(a.runtime_gpu_type, r.gpu_type, a.min_gpu_type) AS gpu_type,
    coalesce(r.tenant, a.min_tenant) AS tenant,
    coalesce(r.priority, a.min_priority) AS priority,
    coalesce(r.workflow_type, a.min_workflow_type) AS workflow_type,
    coalesce(a.runtime_replica, a.min_replica) AS replica,
    coalesce(r.workflow_id, a.min_workflow_id) AS workflow_id,
    coalesce(r.conversation_id, a.min_conversation_id) AS conversation_id,
    coalesce(r.workflow_step, a.min_workflow_step) AS workflow_step,
    coalesce(r.workflow_steps, a.max_workflow_steps) AS workflow_steps,
    coalesce(r.attempt, a.max_attempt, 1) AS attempt,
    -- The root's outcome unless it says success and the final attempt (runtime span or client call) failed.
    CASE WHEN r.outcome <> 'success' THEN r.outcome ELSE coalesce(a.final_outcome, 'success') END AS outcome,
    coalesce(r.error_type, a.min_error_type) AS error_type,
    a.preempted,
    coalesce(r.input_tokens, a.max_input_tokens) AS input_tokens,
    coalesce(r.output_tokens, a.max_output_tokens) AS output_tokens,
    coalesce(r.cached_tokens, a.max_cached_tokens) AS cached_tokens,
    a.cache_hit,
    a.kv_usage,
    a.queue_depth,
    a.gpu_ms,
    a.cost_usd,
    -- The trace was kept (or not) as a whole: its root's sampling decision, else any span's.
    coalesce(r.sample_weight, a.max_sample_weight) AS sample_weight,
    a.endpoint,
    a.span_count
  FROM trace_agg a
  JOIN ranked r ON r.trace_id = a.trace_id AND r.is_first
),
eff AS (
  -- Every span's interval clipped to the root's; `ft` is the first token clipped likewise.
  SELECT
    s.trace_id,
    s.span_id,
    s.parent_span_id,
    s.hop,
    s.queue_ms,
    s.prefill_ms,
    s.decode_ms,
    greatest(s.start_ns, d.r_start) AS es,
    greatest(least(s.end_ns, d.r_end), greatest(s.start_ns, d.r_start)) AS ee,
    CASE WHEN d.first_token_ns IS NULL THEN NULL ELSE least(greatest(d.first_token_ns, d.r_start), d.r_end) END AS ft
  FROM dedup s
  JOIN trace_dims d USING (trace_id)
),
kids AS (
  SELECT c.trace_id, c.parent_span_id AS pid, greatest(c.es, p.es) AS cs, least(c.ee, p.ee) AS ce, p.ft
  FROM eff c
  JOIN eff p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
),
kids_ordered AS (
  SELECT
    *,
    max(ce) OVER (PARTITION BY trace_id, pid ORDER BY cs, ce ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM kids
  WHERE ce > cs
),
covered AS (
  -- Length of the union of the children's intervals, and of its part before the first token.
  -- DuckDB's least() skips NULLs: the first child (no prev_end) must start its sweep at cs, not ft.
  SELECT
    trace_id,
    pid,
    sum(greatest(0, ce - greatest(cs, coalesce(prev_end, cs)))) AS cov_ns,
    sum(greatest(0, least(ce, ft) - greatest(cs, CASE WHEN prev_end IS NULL THEN cs ELSE least(prev_end, ft) END))) AS cov_ft_ns
  FROM kids_ordered
  GROUP BY trace_id, pid
),
selfs AS (
  SELECT
    e.trace_id,
    CASE e.hop
      WHEN 'gateway' THEN 'gateway'
      WHEN 'router' THEN 'router'
      WHEN 'cache' THEN 'cache'
      WHEN 'scheduler' THEN 'queue'
      WHEN 'prefill' THEN 'prefill'
      WHEN 'decode' THEN 'decode'
      WHEN 'stream' THEN 'stream'
      WHEN 'runtime' THEN 'runtime'
      WHEN 'tool' THEN 'tool'
      ELSE 'other'
    END AS hop_key,
    greatest(0, (e.ee - e.es) - coalesce(c.cov_ns, 0)) / 1e6 AS self_ms,
    CASE WHEN e.ft IS NULL THEN NULL ELSE greatest(0, greatest(0, least(e.ee, e.ft) - e.es) - coalesce(c.cov_ft_ns, 0)) / 1e6 END AS self_ft_ms,
    -- vLLM reports queue/prefill/decode as attributes of a runtime span without child spans.
    (e.hop = 'runtime' AND c.cov_ns IS NULL AND coalesce(e.queue_ms, e.prefill_ms, e.decode_ms) IS NOT NULL) AS split,
    coalesce(e.queue_ms, 0) AS q_ms,
    coalesce(e.prefill_ms, 0) AS p_ms,
    coalesce(e.decode_ms, 0) AS d_ms,
    e.queue_ms IS NOT NULL AS has_q,
    e.prefill_ms IS NOT NULL AS has_p,
    e.decode_ms IS NOT NULL AS has_d
  FROM eff e
  LEFT JOIN covered c ON c.trace_id = e.trace_id AND c.pid = e.span_id
),
scaled AS (
  -- When the attributes add up to more than the span's self time (skew, rounding), scale them down.
  SELECT
    *,
    CASE WHEN split AND q_ms + p_ms + d_ms > self_ms THEN self_ms / (q_ms + p_ms + d_ms) ELSE 1.0 END AS k
  FROM selfs
),
-- Each span's part of every hop column: its self time under its own hop, and, for a runtime span
-- split by vLLM's attributes, the queue/prefill/decode parts under theirs (the rest stays runtime).
span_parts AS (
  SELECT
    trace_id,
    hop_key,
    CASE WHEN split THEN greatest(0, self_ms - (q_ms + p_ms + d_ms) * k) ELSE self_ms END AS own_ms,
    -- least()/greatest() skip NULLs: without a first token (self_ft_ms NULL) every TTFT part stays NULL.
    CASE WHEN split AND self_ft_ms IS NOT NULL THEN greatest(0, self_ft_ms - least(self_ft_ms, (q_ms + p_ms) * k)) ELSE self_ft_ms END AS own_ft_ms,
    CASE WHEN split AND has_q THEN q_ms * k END AS sq_ms,
    CASE WHEN split AND has_q AND self_ft_ms IS NOT NULL THEN least(q_ms * k, self_ft_ms) END AS sq_ft_ms,
    CASE WHEN split AND has_p THEN p_ms * k END AS sp_ms,
    CASE WHEN split AND has_p AND self_ft_ms IS NOT NULL THEN least(p_ms * k, greatest(0, self_ft_ms - q_ms * k)) END AS sp_ft_ms,
    CASE WHEN split AND has_d THEN d_ms * k END AS sd_ms,
    CASE WHEN split AND has_d AND self_ft_ms IS NOT NULL THEN 0.0 END AS sd_ft_ms
  FROM scaled
),
hop_times AS (
  SELECT
    trace_id,
    sum(CASE WHEN hop_key = 'gateway' THEN own_ms END) AS hop_gateway_ms,
    sum(CASE WHEN hop_key = 'router' THEN own_ms END) AS hop_router_ms,
    sum(CASE WHEN hop_key = 'cache' THEN own_ms END) AS hop_cache_ms,
    sum(coalesce(CASE WHEN hop_key = 'queue' THEN own_ms END, sq_ms)) AS hop_queue_ms,
    sum(coalesce(CASE WHEN hop_key = 'prefill' THEN own_ms END, sp_ms)) AS hop_prefill_ms,
    sum(coalesce(CASE WHEN hop_key = 'decode' THEN own_ms END, sd_ms)) AS hop_decode_ms,
    sum(CASE WHEN hop_key = 'stream' THEN own_ms END) AS hop_stream_ms,
    sum(CASE WHEN hop_key = 'runtime' THEN own_ms END) AS hop_runtime_ms,
    sum(CASE WHEN hop_key = 'tool' THEN own_ms END) AS hop_tool_ms,
    sum(CASE WHEN hop_key = 'other' THEN own_ms END) AS hop_other_ms,
    sum(CASE WHEN hop_key = 'gateway' THEN own_ft_ms END) AS ttft_hop_gateway_ms,
    sum(CASE WHEN hop_key = 'router' THEN own_ft_ms END) AS ttft_hop_router_ms,
    sum(CASE WHEN hop_key = 'cache' THEN own_ft_ms END) AS ttft_hop_cache_ms,
    sum(coalesce(CASE WHEN hop_key = 'queue' THEN own_ft_ms END, sq_ft_ms)) AS ttft_hop_queue_ms,
    sum(coalesce(CASE WHEN hop_key = 'prefill' THEN own_ft_ms END, sp_ft_ms)) AS ttft_hop_prefill_ms,
    sum(coalesce(CASE WHEN hop_key = 'decode' THEN own_ft_ms END, sd_ft_ms)) AS ttft_hop_decode_ms,
    sum(CASE WHEN hop_key = 'stream' THEN own_ft_ms END) AS ttft_hop_stream_ms,
    sum(CASE WHEN hop_key = 'runtime' THEN own_ft_ms END) AS ttft_hop_runtime_ms,
    sum(CASE WHEN hop_key = 'tool' THEN own_ft_ms END) AS ttft_hop_tool_ms,
    sum(CASE WHEN hop_key = 'other' THEN own_ft_ms END) AS ttft_hop_other_ms,
    sum(own_ms + coalesce(sq_ms, 0) + coalesce(sp_ms, 0) + coalesce(sd_ms, 0)) AS total_ms,
    sum(own_ft_ms + coalesce(sq_ft_ms, 0) + coalesce(sp_ft_ms, 0) + coalesce(sd_ft_ms, 0)) AS ttft_total_ms
  FROM span_parts
  GROUP BY trace_id
),
trace_facts AS (
  SELECT
    d.trace_id,
    (hash(d.trace_id) >> 1)::BIGINT AS trace_key,
    (hash(coalesce(d.workflow_id, d.conversation_id, d.trace_id)) >> 1)::BIGINT AS task_key,
    d.root_span_id,
    d.name,
    d.service,
    d.has_root,
    d.r_start AS start_ns,
    d.r_end AS end_ns,
    d.first_span_ns,
    d.last_span_ns,
    (d.r_end - d.r_start) / 1e6 AS e2e_ms,
    d.first_token_ns,
    CASE WHEN d.first_token_ns IS NULL THEN NULL ELSE least(greatest(d.first_token_ns - d.r_start, 0), d.r_end - d.r_start) / 1e6 END AS ttft_ms,
    d.server_ttft_ms,
    d.pool,
    d.model,
    d.region,
    d.gpu_type,
    d.tenant,
    d.priority,
    d.workflow_type,
    d.replica,
    coalesce(d.workflow_id, d.conversation_id, d.trace_id) AS task_id,
    d.workflow_id,
    d.conversation_id,
    d.workflow_step,
    d.workflow_steps,
    CASE WHEN d.workflow_step IS NULL THEN 'trace:' || d.trace_id ELSE 'step:' || d.workflow_step END AS step_key,
    d.attempt,
    d.outcome,
    d.error_type,
    d.preempted,
    d.input_tokens,
    d.output_tokens,
    d.cached_tokens,
    d.cache_hit,
    d.kv_usage,
    d.queue_depth,
    d.gpu_ms,
    d.cost_usd,
    d.sample_weight,
    d.endpoint,
    d.span_count,
    h.* EXCLUDE (trace_id, total_ms, ttft_total_ms),
    -- Share of each hop in the request's attributed time (absent hop = 0; NULL without any time).
    coalesce(h.hop_gateway_ms, 0) / nullif(h.total_ms, 0) AS share_gateway,
    coalesce(h.hop_router_ms, 0) / nullif(h.total_ms, 0) AS share_router,
    coalesce(h.hop_cache_ms, 0) / nullif(h.total_ms, 0) AS share_cache,
    coalesce(h.hop_queue_ms, 0) / nullif(h.total_ms, 0) AS share_queue,
    coalesce(h.hop_prefill_ms, 0) / nullif(h.total_ms, 0) AS share_prefill,
    coalesce(h.hop_decode_ms, 0) / nullif(h.total_ms, 0) AS share_decode,
    coalesce(h.hop_stream_ms, 0) / nullif(h.total_ms, 0) AS share_stream,
    coalesce(h.hop_runtime_ms, 0) / nullif(h.total_ms, 0) AS share_runtime,
    coalesce(h.hop_tool_ms, 0) / nullif(h.total_ms, 0) AS share_tool,
    coalesce(h.hop_other_ms, 0) / nullif(h.total_ms, 0) AS share_other,
    coalesce(h.ttft_hop_gateway_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_gateway,
    coalesce(h.ttft_hop_router_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_router,
    coalesce(h.ttft_hop_cache_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_cache,
    coalesce(h.ttft_hop_queue_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_queue,
    coalesce(h.ttft_hop_prefill_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_prefill,
    coalesce(h.ttft_hop_decode_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_decode,
    coalesce(h.ttft_hop_stream_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_stream,
    coalesce(h.ttft_hop_runtime_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_runtime,
    coalesce(h.ttft_hop_tool_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_tool,
    coalesce(h.ttft_hop_other_ms, 0) / nullif(h.ttft_total_ms, 0) AS ttft_share_other
  FROM trace_dims d
  JOIN hop_times h USING (trace_id)
)
