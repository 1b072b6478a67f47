-- read-prefill-speed.sql for ClickHouse (18.16 and later): the same prefill speed per pool over the
-- same spans. What differs:
-- - span_store FINAL: an export the OTLP client sent again after a partly failed insert leaves a
--   span's copy on a shard (scale-out design, decision 2); FINAL counts each span once (a trace's
--   copies share its shard), as DuckDB's store, which keeps no such copies, does.
-- - fastest_ms_per_token is DuckDB's quantile_cont by its definition — lo + (hi − lo) × frac at rank
--   0.1 × (n − 1) of the sorted values — from the long prompts' values as a sorted array: 18.16's
--   quantiles pick an element or interpolate otherwise. NULL without long prompts, as in DuckDB.
-- - FILTER (WHERE …) is countIf/groupArrayIf; no alias repeats a column's name (18.16 would read the
--   alias in WHERE).
SELECT
  pool,
  prefill_sum / uncached_sum AS ms_per_token,
  n AS requests,
  if(length(fastest) = 0, NULL,
    fastest[toUInt64(floor(0.1 * (length(fastest) - 1))) + 1]
      + (fastest[toUInt64(ceil(0.1 * (length(fastest) - 1))) + 1] - fastest[toUInt64(floor(0.1 * (length(fastest) - 1))) + 1])
        * (0.1 * (length(fastest) - 1) - floor(0.1 * (length(fastest) - 1)))) AS fastest_ms_per_token,
  long_n AS long_requests
FROM (
  SELECT
    pool,
    arraySort(groupArrayIf(
      assumeNotNull(prefill_ms) / (assumeNotNull(input_tokens) - ifNull(cached_tokens, 0)),
      assumeNotNull(input_tokens) - ifNull(cached_tokens, 0) >= 256
    )) AS fastest,
    sum(prefill_ms) AS prefill_sum,
    sum(greatest(input_tokens - ifNull(cached_tokens, 0), 1)) AS uncached_sum,
    count() AS n,
    countIf(input_tokens - ifNull(cached_tokens, 0) >= 256) AS long_n
  FROM {{database}}.span_store FINAL
  WHERE prefill_ms IS NOT NULL
    AND input_tokens IS NOT NULL
    AND pool IS NOT NULL
    AND end_ns > $from_ns
    AND end_ns <= $at_ns
  GROUP BY pool
)
