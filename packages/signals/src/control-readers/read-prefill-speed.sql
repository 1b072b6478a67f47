-- Prefill speed per pool over (from_ns, at_ns]: milliseconds of prefill per uncached prompt token,
-- summed over the window's runtime spans (vLLM gen_ai.latency.time_in_model_prefill). An idle
-- engine holds this near its per-token cost; it grows when prefills share the batch token budget
-- (contention) or the GPU runs slow (degradation), independent of the prompt-length mix.
-- fastest_ms_per_token is the 10th percentile per request over prompts of at least 256 uncached
-- tokens (so the fixed per-request overhead does not dominate): the requests that ran with the
-- least contention. Load slows the typical request; a slow GPU slows even the fastest.
SELECT
  pool,
  sum(prefill_ms) / sum(greatest(input_tokens - coalesce(cached_tokens, 0), 1)) AS ms_per_token,
  count(*) AS requests,
  quantile_cont(prefill_ms / (input_tokens - coalesce(cached_tokens, 0)), 0.1)
    FILTER (WHERE input_tokens - coalesce(cached_tokens, 0) >= 256) AS fastest_ms_per_token,
  count(*) FILTER (WHERE input_tokens - coalesce(cached_tokens, 0) >= 256) AS long_requests
FROM spans
WHERE prefill_ms IS NOT NULL
  AND input_tokens IS NOT NULL
  AND pool IS NOT NULL
  AND end_ns > $from_ns
  AND end_ns <= $at_ns
GROUP BY pool
