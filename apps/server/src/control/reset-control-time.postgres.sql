-- The PostgreSQL form of reset-control-time.sql, for nodes sharing control and alert state
-- (migratePostgresControlState, migratePostgresAlertState). One statement, so one transaction on
-- whichever pooled connection runs it; it returns how many rows of each it moved.
WITH recommendations AS (
  UPDATE control_recommendations SET
    created_ns = least(created_ns, $1::bigint),
    updated_ns = least(updated_ns, $1::bigint),
    -- least() skips NULLs: a recommendation not applied (or verified) must stay so.
    applied_ns = CASE WHEN applied_ns > $1::bigint THEN $1::bigint ELSE applied_ns END,
    verified_ns = CASE WHEN verified_ns > $1::bigint THEN $1::bigint ELSE verified_ns END
  WHERE greatest(created_ns, updated_ns, coalesce(applied_ns, 0), coalesce(verified_ns, 0)) > $1::bigint
  RETURNING 1
), audit AS (
  UPDATE control_audit SET at_ns = $1::bigint WHERE at_ns > $1::bigint
  RETURNING 1
), alerts AS (
  UPDATE alert_engine_state SET value = ($1::bigint)::text
  WHERE name = 'evaluated_until_ns'
    -- DuckDB's TRY_CAST: a value that is not a BIGINT is left alone
    AND CASE
      WHEN value !~ '^-?[0-9]{1,19}$' THEN NULL
      WHEN value::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN value::bigint
    END > $1::bigint
  RETURNING 1
)
SELECT
  (SELECT count(*) FROM recommendations)::integer AS recommendations,
  (SELECT count(*) FROM audit)::integer AS audit,
  (SELECT count(*) FROM alerts)::integer AS alerts
