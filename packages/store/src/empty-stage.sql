-- Empties the stage once its rows are in the main tables (a transaction on the stage database).
BEGIN TRANSACTION;
DELETE FROM stage.main.span_store;
DELETE FROM stage.main.metric_store;
DELETE FROM stage.main.ingest_stage_epoch;
COMMIT;
