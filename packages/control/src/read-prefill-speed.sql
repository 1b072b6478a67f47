-- Prefill speed per pool over (from_ns, at_ns]: milliseconds of prefill per uncached prompt token,
-- summed over the window's runtime spans (vLLM gen_ai.latency.time_in_model_prefill). An idle
-- engine holds this near its per-token cost; it grows when prefills share the batch token budget
-- (contention) or the GPU runs slow (degradation), independent of the prompt-length mix.
SELECT
  pool,
  sum(prefill_ms) / sum(greatest(input_tokens - coalesce(cached_tokens, 0), 1)) AS ms_per_token,
  count(*) AS requests
FROM spans
WHERE prefill_ms IS NOT NULL
  AND input_tokens IS NOT NULL
  AND pool IS NOT NULL
  AND end_ns > $from_ns
  AND end_ns <= $at_ns
GROUP BY pool
