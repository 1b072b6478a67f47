-- Fragment (a subquery's body): the requests of the tasks that ended in ($from_ns, $to_ns], with
-- the dimensions their pool's config adds (d_…) and the task's status, as list-tasks.sql's
-- `members`. task_complete and task_finals_ok are NOT NULL, so no condition below is NULL.
    SELECT
      *,
      indexOf($cfg_names, ifNull(pool, '')) AS cfg_index,
      coalesce(model, if(cfg_index = 0, NULL, arrayElement($cfg_models, cfg_index))) AS d_model,
      coalesce(region, if(cfg_index = 0, NULL, arrayElement($cfg_regions, cfg_index))) AS d_region,
      coalesce(gpu_type, if(cfg_index = 0, NULL, arrayElement($cfg_gpu_types, cfg_index))) AS d_gpu_type,
      multiIf(
        (NOT task_complete OR (task_declared_steps IS NULL AND coalesce(workflow_id, conversation_id) IS NOT NULL))
          AND task_end_ns > $pending_after_ns, 'pending',
        NOT task_complete, 'abandoned',
        task_finals_ok, 'success',
        'failed'
      ) AS status
    FROM {{database}}.request_facts FINAL
    WHERE deleted = 0 AND task_end_ns > $from_ns AND task_end_ns <= $to_ns
