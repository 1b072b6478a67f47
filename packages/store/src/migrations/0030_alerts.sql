-- Alerting state (packages/alerts). Event times are *_ns (BIGINT ns since the epoch); wall-clock
-- times of deliveries are *_ms. No key constraints: the alert engine is the only writer.

-- One row per alert episode (pending → firing → resolved); active ones are reloaded at start.
CREATE TABLE IF NOT EXISTS alert_instances (
  id VARCHAR NOT NULL,
  fingerprint VARCHAR NOT NULL,
  rule VARCHAR NOT NULL,
  rule_type VARCHAR NOT NULL,
  state VARCHAR NOT NULL,
  labels JSON NOT NULL,
  annotations JSON NOT NULL,
  receivers VARCHAR[] NOT NULL,
  value DOUBLE,
  active_at_ns BIGINT NOT NULL,
  starts_at_ns BIGINT,
  ends_at_ns BIGINT,
  last_seen_ns BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);

-- Notification groups per receiver (what was last sent, when), so a restart neither repeats nor
-- forgets a notification.
CREATE TABLE IF NOT EXISTS alert_notification_groups (
  id VARCHAR NOT NULL,
  receiver VARCHAR NOT NULL,
  state JSON NOT NULL,
  updated_at_ms BIGINT NOT NULL
);

-- Evaluation cursor: the last event time evaluated.
CREATE TABLE IF NOT EXISTS alert_engine_state (
  name VARCHAR NOT NULL,
  value VARCHAR
);
INSERT INTO alert_engine_state SELECT 'evaluated_until_ns', NULL
WHERE NOT EXISTS (SELECT 1 FROM alert_engine_state WHERE name = 'evaluated_until_ns');

-- Outbox + delivery log: one row per notification to one receiver. status: pending | delivered | dead.
CREATE TABLE IF NOT EXISTS alert_deliveries (
  id VARCHAR NOT NULL,
  seq BIGINT NOT NULL,
  kind VARCHAR NOT NULL,
  receiver VARCHAR NOT NULL,
  receiver_type VARCHAR NOT NULL,
  group_key VARCHAR NOT NULL,
  notification_status VARCHAR NOT NULL,
  fingerprints VARCHAR[] NOT NULL,
  notification JSON NOT NULL,
  status VARCHAR NOT NULL,
  attempts INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  -- retry horizon: still undelivered after this, the notification becomes a dead letter
  retry_until_ms BIGINT NOT NULL,
  next_attempt_at_ms BIGINT,
  last_attempt_at_ms BIGINT,
  finished_at_ms BIGINT,
  last_http_status INTEGER,
  last_error VARCHAR
);

-- Every attempt, for the delivery log. outcome: ok | failed | retryable.
CREATE TABLE IF NOT EXISTS alert_delivery_attempts (
  delivery_id VARCHAR NOT NULL,
  attempt INTEGER NOT NULL,
  started_at_ms BIGINT NOT NULL,
  duration_ms DOUBLE NOT NULL,
  outcome VARCHAR NOT NULL,
  http_status INTEGER,
  error VARCHAR,
  retry_after_ms BIGINT
);
