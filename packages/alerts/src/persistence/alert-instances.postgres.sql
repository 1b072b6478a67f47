-- The PostgreSQL form of alert-instances.sql (nodes sharing alert state). Text is ordered with
-- COLLATE "C", byte by byte as DuckDB orders it.

-- name: upsertInstance
-- Insert and update in one: a new leader may write an episode again that the previous leader
-- stored. What an episode started as (fingerprint, rule, its type, active_at) is kept.
INSERT INTO alert_instances
  (id, fingerprint, rule, rule_type, state, labels, annotations, receivers, value,
   active_at_ns, starts_at_ns, ends_at_ns, last_seen_ns, updated_at_ms)
VALUES
  ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::double precision,
   $10::bigint, $11::bigint, $12::bigint, $13::bigint, $14::bigint)
ON CONFLICT (id) DO UPDATE SET
  state = EXCLUDED.state,
  labels = EXCLUDED.labels,
  annotations = EXCLUDED.annotations,
  receivers = EXCLUDED.receivers,
  value = EXCLUDED.value,
  starts_at_ns = EXCLUDED.starts_at_ns,
  ends_at_ns = EXCLUDED.ends_at_ns,
  last_seen_ns = EXCLUDED.last_seen_ns,
  updated_at_ms = EXCLUDED.updated_at_ms;

-- name: deleteInstance
DELETE FROM alert_instances WHERE id = $1;

-- name: selectActive
SELECT * FROM alert_instances WHERE state IN ('pending', 'firing')
ORDER BY active_at_ns, id COLLATE "C";

-- name: selectHistory
SELECT * FROM alert_instances
WHERE state = 'resolved'
  AND ($1::text IS NULL OR rule = $1)
  AND ($2::text IS NULL OR fingerprint = $2)
ORDER BY ends_at_ns DESC NULLS LAST, id COLLATE "C"
LIMIT $3;

-- name: selectCursor
SELECT value FROM alert_engine_state WHERE name = 'evaluated_until_ns';

-- name: upsertCursor
INSERT INTO alert_engine_state (name, value) VALUES ('evaluated_until_ns', $1)
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;

-- name: selectGroups
SELECT state FROM alert_notification_groups ORDER BY id COLLATE "C";

-- name: deleteGroups
DELETE FROM alert_notification_groups WHERE id = ANY($1::text[]);

-- name: upsertGroups
-- Upserts rather than DuckDB's insert-or-update by what this process wrote: the group may have
-- been written by the previous leader after this one loaded the groups.
INSERT INTO alert_notification_groups (id, receiver, state, updated_at_ms)
SELECT g.id, g.receiver, g.state, $4::bigint
FROM unnest($1::text[], $2::text[], $3::text[]) AS g(id, receiver, state)
ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, updated_at_ms = EXCLUDED.updated_at_ms;
