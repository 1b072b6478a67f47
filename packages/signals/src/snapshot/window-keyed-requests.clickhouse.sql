-- Fragment (a subquery's body): window-keyed-requests.sql for ClickHouse — the requests that ENDED
-- in ($from_ns, $to_ns], bucketed by $step_ns, with their keys before the group cap (`kr_*`, by the
-- dimensions grouped by: `$by_*` are 1 or 0) and whether they pass the filter (`$f_*`, NULL for
-- none); requests outside the filter keep no key. Dimensions a request lacks come from the pool's
-- config entry ($cfg_* arrays, aligned with $cfg_names). The current rows only: FINAL, not deleted
-- (packages/store/src/clickhouse/clickhouse-schema.ts). windowed-requests(-uncapped).clickhouse.sql
-- turn kr_* into the queries' k_*.
    SELECT
      *,
      intDiv(end_ns - $from_ns - 1, $step_ns) AS bucket,
      if($by_pool AND in_filter, pool, NULL) AS kr_pool,
      if($by_model AND in_filter, dim_model, NULL) AS kr_model,
      if($by_region AND in_filter, dim_region, NULL) AS kr_region,
      if($by_gpu_type AND in_filter, dim_gpu_type, NULL) AS kr_gpu_type,
      if($by_tenant AND in_filter, tenant, NULL) AS kr_tenant,
      if($by_priority AND in_filter, priority, NULL) AS kr_priority,
      if($by_workflow_type AND in_filter, workflow_type, NULL) AS kr_workflow_type
    FROM (
      SELECT
        *,
        -- 0 for a pool the config does not name (arrayElement would then give '' where a NULL is meant).
        indexOf($cfg_names, ifNull(pool, '')) AS cfg_index,
        coalesce(model, if(cfg_index = 0, NULL, arrayElement($cfg_models, cfg_index))) AS dim_model,
        coalesce(region, if(cfg_index = 0, NULL, arrayElement($cfg_regions, cfg_index))) AS dim_region,
        coalesce(gpu_type, if(cfg_index = 0, NULL, arrayElement($cfg_gpu_types, cfg_index))) AS dim_gpu_type,
        ifNull(
          ($f_pool IS NULL OR pool = $f_pool)
            AND ($f_model IS NULL OR dim_model = $f_model)
            AND ($f_region IS NULL OR dim_region = $f_region)
            AND ($f_gpu_type IS NULL OR dim_gpu_type = $f_gpu_type)
            AND ($f_tenant IS NULL OR tenant = $f_tenant)
            AND ($f_priority IS NULL OR toString(priority) = $f_priority)
            AND ($f_workflow_type IS NULL OR workflow_type = $f_workflow_type),
          0
        ) AS in_filter
      FROM {{database}}.request_facts FINAL
      WHERE deleted = 0 AND end_ns > $from_ns AND end_ns <= $to_ns
        AND start_ns >= $facts_from_ns AND start_ns <= $to_ns
        -- The sort key's own expression: 18.16 skips parts and granules by it, not by start_ns.
        AND intDiv(start_ns, 60000000000) BETWEEN intDiv($facts_from_ns, 60000000000) AND intDiv($to_ns, 60000000000)
    )
