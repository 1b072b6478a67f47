-- Recommendations of the control loop and their lifecycle (docs/api.md): proposed → approved |
-- rejected → applied → verified | rolled_back, or expired. Times are event time in ns.
CREATE TABLE IF NOT EXISTS control_recommendations (
  id VARCHAR PRIMARY KEY,
  kind VARCHAR NOT NULL,
  target JSON NOT NULL,
  target_key VARCHAR NOT NULL,
  action JSON NOT NULL,
  direction VARCHAR NOT NULL,
  reason VARCHAR NOT NULL,
  evidence JSON NOT NULL,
  expected_impact JSON NOT NULL,
  confidence DOUBLE NOT NULL,
  state VARCHAR NOT NULL,
  policy VARCHAR,
  gate VARCHAR,
  scope_pools JSON NOT NULL,
  created_ns BIGINT NOT NULL,
  updated_ns BIGINT NOT NULL,
  applied_ns BIGINT,
  verified_ns BIGINT,
  previous_action JSON,
  baseline JSON,
  action_id VARCHAR,
  verification JSON
);

CREATE INDEX IF NOT EXISTS control_recommendations_state ON control_recommendations (state);
