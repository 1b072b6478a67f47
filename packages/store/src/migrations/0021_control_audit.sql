-- Audit log of every control decision and action: what, why, by which policy or person, result.
CREATE TABLE IF NOT EXISTS control_audit (
  seq BIGINT NOT NULL,
  id VARCHAR NOT NULL,
  at_ns BIGINT NOT NULL,
  recorded_at_ms BIGINT NOT NULL,
  recommendation_id VARCHAR,
  action_id VARCHAR,
  kind VARCHAR,
  target JSON,
  decision VARCHAR NOT NULL,
  actor VARCHAR NOT NULL,
  reason VARCHAR NOT NULL,
  result VARCHAR NOT NULL,
  details JSON NOT NULL
);
