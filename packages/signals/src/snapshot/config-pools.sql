-- Fragment (CTE): the `pools` section of the config, passed as JSON in $pools_json.
cfg_pools AS (
  SELECT p.name, p.gpu_type, p.model, p.region, p.gpus_per_replica, p.peak_tokens_per_s
  FROM (
    SELECT unnest(json_transform(
      $pools_json::VARCHAR,
      '[{"name":"VARCHAR","gpu_type":"VARCHAR","model":"VARCHAR","region":"VARCHAR","gpus_per_replica":"DOUBLE","peak_tokens_per_s":"DOUBLE"}]'
    )) AS p
  )
)
