-- The PostgreSQL form of deliveries.sql (nodes sharing alert state). Text is ordered with
-- COLLATE "C", byte by byte as DuckDB orders it.

-- name: insertDelivery
-- Numbered by the database (seq), so deliveries queued by successive leaders keep their order.
-- The same id again (a retried insert that had committed) keeps the stored row.
INSERT INTO alert_deliveries
  (id, kind, receiver, receiver_type, group_key, notification_status, fingerprints, notification,
   status, attempts, created_at_ms, retry_until_ms, next_attempt_at_ms)
VALUES
  ($1, $2, $3, $4, $5, $6, $7::text[], $8, 'pending', 0, $9::bigint, $10::bigint, $9::bigint)
ON CONFLICT (id) DO NOTHING
RETURNING seq;

-- name: claimDelivery
-- The right to make the next attempt, for $3 ms of the database's clock: free, already this
-- queue's, or left by a queue whose claim ran out (it stopped or died mid-send). Two nodes
-- claiming at once: the second waits on the row lock, then sees the first one's claim.
UPDATE alert_deliveries
SET claimed_by = $2, claimed_until = clock_timestamp() + $3::bigint * interval '1 millisecond'
WHERE id = $1 AND status = 'pending'
  AND (claimed_by IS NULL OR claimed_by = $2 OR claimed_until <= clock_timestamp())
RETURNING *;

-- name: selectClaim
SELECT status,
  greatest(0, ceil(extract(epoch FROM claimed_until - clock_timestamp()) * 1000))::bigint AS claim_left_ms
FROM alert_deliveries WHERE id = $1;

-- name: releaseDelivery
UPDATE alert_deliveries SET claimed_by = NULL, claimed_until = NULL WHERE id = $1 AND claimed_by = $2;

-- name: recordAttempt
-- One statement: the attempt is logged and the delivery moves on together, and only if no other
-- queue recorded this attempt first (attempts is still the one before it).
WITH moved AS (
  UPDATE alert_deliveries SET
    status = $2,
    attempts = $3::integer,
    next_attempt_at_ms = $4::bigint,
    last_attempt_at_ms = $5::bigint,
    finished_at_ms = $6::bigint,
    last_http_status = $7::integer,
    last_error = $8::text,
    claimed_by = NULL,
    claimed_until = NULL
  WHERE id = $1 AND attempts = $3::integer - 1
  RETURNING id
)
INSERT INTO alert_delivery_attempts
  (delivery_id, attempt, started_at_ms, duration_ms, outcome, http_status, error, retry_after_ms)
SELECT id, $9::integer, $10::bigint, $11::double precision, $12::text, $13::integer, $14::text, $15::bigint
FROM moved
ON CONFLICT (delivery_id, attempt) DO NOTHING;

-- name: selectPending
SELECT * FROM alert_deliveries WHERE status = 'pending' ORDER BY seq;

-- name: selectMaxSeq
SELECT coalesce(max(seq), 0) AS seq FROM alert_deliveries;

-- name: selectSeq
SELECT seq FROM alert_deliveries WHERE id = $1;

-- name: selectById
SELECT * FROM alert_deliveries WHERE id = $1;

-- name: selectByFingerprint
SELECT * FROM alert_deliveries
WHERE fingerprints @> ARRAY[$1::text]
ORDER BY seq DESC
LIMIT $2;

-- name: selectDeadLetters
SELECT * FROM alert_deliveries
WHERE status = 'dead' AND kind = 'notification'
  AND ($1::text IS NULL OR receiver = $1)
ORDER BY seq DESC
LIMIT $2;

-- name: selectRecent
SELECT * FROM alert_deliveries
WHERE ($1::text IS NULL OR status = $1)
  AND ($2::text IS NULL OR receiver = $2)
ORDER BY seq DESC
LIMIT $3;

-- name: selectAttempts
SELECT * FROM alert_delivery_attempts
WHERE delivery_id = ANY($1::text[])
ORDER BY delivery_id COLLATE "C", attempt;

-- name: pruneAttempts
DELETE FROM alert_delivery_attempts WHERE delivery_id IN (
  SELECT id FROM alert_deliveries WHERE status <> 'pending' AND finished_at_ms < $1::bigint
);

-- name: pruneDeliveries
DELETE FROM alert_deliveries WHERE status <> 'pending' AND finished_at_ms < $1::bigint;
