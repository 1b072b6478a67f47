-- name: insertDelivery
INSERT INTO alert_deliveries
  (id, seq, kind, receiver, receiver_type, group_key, notification_status, fingerprints, notification,
   status, attempts, created_at_ms, retry_until_ms, next_attempt_at_ms)
VALUES
  ($id, $seq, $kind, $receiver, $receiverType, $groupKey, $notificationStatus,
   CAST(CAST($fingerprints AS JSON) AS VARCHAR[]), $notification,
   'pending', 0, $createdAtMs, $retryUntilMs, $createdAtMs);

-- name: recordAttempt
INSERT INTO alert_delivery_attempts
  (delivery_id, attempt, started_at_ms, duration_ms, outcome, http_status, error, retry_after_ms)
VALUES ($deliveryId, $attempt, $startedAtMs, $durationMs, $outcome, $httpStatus, $error, $retryAfterMs);

-- name: updateDelivery
UPDATE alert_deliveries SET
  status = $status,
  attempts = $attempts,
  next_attempt_at_ms = $nextAttemptAtMs,
  last_attempt_at_ms = $lastAttemptAtMs,
  finished_at_ms = $finishedAtMs,
  last_http_status = $lastHttpStatus,
  last_error = $lastError
WHERE id = $id;

-- name: selectPending
SELECT * FROM alert_deliveries WHERE status = 'pending' ORDER BY seq;

-- name: selectMaxSeq
SELECT coalesce(max(seq), 0) AS seq FROM alert_deliveries;

-- name: selectById
SELECT * FROM alert_deliveries WHERE id = $id;

-- name: selectByFingerprint
SELECT * FROM alert_deliveries
WHERE list_contains(fingerprints, $fingerprint)
ORDER BY seq DESC
LIMIT $limit;

-- name: selectDeadLetters
SELECT * FROM alert_deliveries
WHERE status = 'dead' AND kind = 'notification'
  AND (CAST($receiver AS VARCHAR) IS NULL OR receiver = $receiver)
ORDER BY seq DESC
LIMIT $limit;

-- name: selectRecent
SELECT * FROM alert_deliveries
WHERE (CAST($status AS VARCHAR) IS NULL OR status = $status)
  AND (CAST($receiver AS VARCHAR) IS NULL OR receiver = $receiver)
ORDER BY seq DESC
LIMIT $limit;

-- name: selectAttempts
SELECT * FROM alert_delivery_attempts
WHERE list_contains(CAST(CAST($ids AS JSON) AS VARCHAR[]), delivery_id)
ORDER BY delivery_id, attempt;

-- name: pruneAttempts
DELETE FROM alert_delivery_attempts WHERE delivery_id IN (
  SELECT id FROM alert_deliveries WHERE status <> 'pending' AND finished_at_ms < $beforeMs
);

-- name: pruneDeliveries
DELETE FROM alert_deliveries WHERE status <> 'pending' AND finished_at_ms < $beforeMs;
