-- Per (bucket, group, pool): what the group's requests used of each pool — the basis for
-- allocating the pool's cost to the group (GPU time, else tokens, else request count) — and the
-- explicit governor.cost.usd they reported.
WITH
-- @include windowed-requests.sql
SELECT
  bucket, k_pool, k_model, k_region, k_gpu_type, k_tenant, k_priority, k_workflow_type,
  pool,
  count(*) AS requests,
  sum(gpu_ms) AS gpu_ms,
  sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
  sum(output_tokens) AS output_tokens,
  sum(cost_usd) AS explicit_cost_usd
FROM keyed_requests
GROUP BY ALL
