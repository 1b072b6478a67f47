-- name: insertInstance
INSERT INTO alert_instances
  (id, fingerprint, rule, rule_type, state, labels, annotations, receivers, value,
   active_at_ns, starts_at_ns, ends_at_ns, last_seen_ns, updated_at_ms)
VALUES
  ($id, $fingerprint, $rule, $ruleType, $state, $labels, $annotations,
   CAST(CAST($receivers AS JSON) AS VARCHAR[]), $value,
   $activeAtNs, $startsAtNs, $endsAtNs, $lastSeenNs, $updatedAtMs);

-- name: updateInstance
UPDATE alert_instances SET
  state = $state,
  labels = $labels,
  annotations = $annotations,
  receivers = CAST(CAST($receivers AS JSON) AS VARCHAR[]),
  value = $value,
  starts_at_ns = $startsAtNs,
  ends_at_ns = $endsAtNs,
  last_seen_ns = $lastSeenNs,
  updated_at_ms = $updatedAtMs
WHERE id = $id;

-- name: deleteInstance
DELETE FROM alert_instances WHERE id = $id;

-- name: selectActive
SELECT * FROM alert_instances WHERE state IN ('pending', 'firing');

-- name: selectHistory
SELECT * FROM alert_instances
WHERE state = 'resolved'
  AND (CAST($rule AS VARCHAR) IS NULL OR rule = $rule)
  AND (CAST($fingerprint AS VARCHAR) IS NULL OR fingerprint = $fingerprint)
ORDER BY ends_at_ns DESC, id
LIMIT $limit;

-- name: selectCursor
SELECT value FROM alert_engine_state WHERE name = 'evaluated_until_ns';

-- name: updateCursor
UPDATE alert_engine_state SET value = $value WHERE name = 'evaluated_until_ns';

-- name: selectGroups
SELECT state FROM alert_notification_groups;

-- name: insertGroup
INSERT INTO alert_notification_groups (id, receiver, state, updated_at_ms)
VALUES ($id, $receiver, $state, $updatedAtMs);

-- name: updateGroup
UPDATE alert_notification_groups SET state = $state, updated_at_ms = $updatedAtMs WHERE id = $id;

-- name: deleteGroup
DELETE FROM alert_notification_groups WHERE id = $id;
