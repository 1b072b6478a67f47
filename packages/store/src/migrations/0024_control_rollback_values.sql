-- What an actuator found in effect on the fleet before it carried out a recommendation (the replicas
-- of a /scale subresource, the backendRef weights of an HTTPRoute), so that the recommendation's
-- rollback restores that value even after Governor restarted between the apply and the verification.
-- One row per actuator and recommendation: the first value read wins (a retried apply reads its own
-- change back and must not overwrite it).
CREATE TABLE IF NOT EXISTS control_rollback_values (
  actuator VARCHAR NOT NULL,
  recommendation_id VARCHAR NOT NULL,
  action_id VARCHAR NOT NULL,
  object VARCHAR NOT NULL,
  value JSON NOT NULL,
  recorded_at_ms BIGINT NOT NULL,
  PRIMARY KEY (actuator, recommendation_id)
);
