-- Moves the control loop's and alerting's event-time state back to $to_ns: every time past it
-- (left by an event dated in the future before intake refused such events) becomes $to_ns, so
-- the next tick at a real watermark is not refused as time reversed. Earlier times are untouched.
UPDATE control_recommendations SET
  created_ns = least(created_ns, $to_ns),
  updated_ns = least(updated_ns, $to_ns),
  -- least() skips NULLs: a recommendation not applied (or verified) must stay so.
  applied_ns = CASE WHEN applied_ns > $to_ns THEN $to_ns ELSE applied_ns END,
  verified_ns = CASE WHEN verified_ns > $to_ns THEN $to_ns ELSE verified_ns END
WHERE greatest(created_ns, updated_ns, coalesce(applied_ns, 0), coalesce(verified_ns, 0)) > $to_ns;
UPDATE control_audit SET at_ns = $to_ns WHERE at_ns > $to_ns;
UPDATE alert_engine_state SET value = CAST($to_ns AS VARCHAR)
WHERE name = 'evaluated_until_ns' AND TRY_CAST(value AS BIGINT) > $to_ns;
