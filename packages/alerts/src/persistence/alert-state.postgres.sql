-- Alert state in PostgreSQL, shared by Governor nodes (store.engine: clickhouse): the tables of the
-- store's migration 0030, with keys. Only the leader runs the alert engine, but the next leader
-- reads what the previous one wrote and may write the same rows again, so rows are keyed and
-- written as upserts; delivery numbers come from a sequence; a delivery is claimed before each
-- attempt so a deposed leader still sending it and the new leader never both send it.
--
-- Run as one script, i.e. one transaction, under a transaction-scoped advisory lock: nodes starting
-- together would otherwise race on CREATE ... IF NOT EXISTS, which fails when another session
-- creates the same name at the same moment.
SELECT pg_advisory_xact_lock(hashtext('governor.alert_state.schema'));

-- One row per alert episode (pending → firing → resolved); active ones are reloaded at start.
CREATE TABLE IF NOT EXISTS alert_instances (
  id TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  rule TEXT NOT NULL,
  rule_type TEXT NOT NULL,
  state TEXT NOT NULL,
  labels TEXT NOT NULL,
  annotations TEXT NOT NULL,
  receivers TEXT[] NOT NULL,
  value DOUBLE PRECISION,
  active_at_ns BIGINT NOT NULL,
  starts_at_ns BIGINT,
  ends_at_ns BIGINT,
  last_seen_ns BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS alert_instances_active ON alert_instances (active_at_ns)
  WHERE state IN ('pending', 'firing');
CREATE INDEX IF NOT EXISTS alert_instances_history ON alert_instances (ends_at_ns DESC)
  WHERE state = 'resolved';

-- Notification groups per receiver (what was last sent, when), so a new leader neither repeats
-- nor forgets a notification.
CREATE TABLE IF NOT EXISTS alert_notification_groups (
  id TEXT PRIMARY KEY,
  receiver TEXT NOT NULL,
  state TEXT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);

-- Evaluation cursor: the last event time evaluated.
CREATE TABLE IF NOT EXISTS alert_engine_state (
  name TEXT PRIMARY KEY,
  value TEXT
);
INSERT INTO alert_engine_state (name, value) VALUES ('evaluated_until_ns', NULL)
ON CONFLICT (name) DO NOTHING;

-- Outbox + delivery log: one row per notification to one receiver. status: pending | delivered | dead.
CREATE TABLE IF NOT EXISTS alert_deliveries (
  id TEXT PRIMARY KEY,
  -- the order deliveries were queued in, numbered by the database
  seq BIGSERIAL NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  receiver TEXT NOT NULL,
  receiver_type TEXT NOT NULL,
  group_key TEXT NOT NULL,
  notification_status TEXT NOT NULL,
  fingerprints TEXT[] NOT NULL,
  notification TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  -- retry horizon: still undelivered after this, the notification becomes a dead letter
  retry_until_ms BIGINT NOT NULL,
  next_attempt_at_ms BIGINT,
  last_attempt_at_ms BIGINT,
  finished_at_ms BIGINT,
  last_http_status INTEGER,
  last_error TEXT,
  -- the delivery queue making the next attempt, and until when (the database's clock, not a node's)
  claimed_by TEXT,
  claimed_until TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS alert_deliveries_pending ON alert_deliveries (seq) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS alert_deliveries_fingerprints ON alert_deliveries USING GIN (fingerprints);
CREATE INDEX IF NOT EXISTS alert_deliveries_finished ON alert_deliveries (finished_at_ms)
  WHERE status <> 'pending';

-- Every attempt, for the delivery log; one row per attempt number. outcome: ok | failed | retryable.
CREATE TABLE IF NOT EXISTS alert_delivery_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  started_at_ms BIGINT NOT NULL,
  duration_ms DOUBLE PRECISION NOT NULL,
  outcome TEXT NOT NULL,
  http_status INTEGER,
  error TEXT,
  retry_after_ms BIGINT,
  PRIMARY KEY (delivery_id, attempt)
);
