-- Copies the staged rows into the main tables and records the stage's epoch, in one transaction
-- on the main database. Skipped by the caller when the epoch was already recorded.
BEGIN TRANSACTION;
INSERT INTO span_store BY NAME SELECT * FROM stage.main.span_store;
INSERT INTO metric_store BY NAME SELECT * FROM stage.main.metric_store;
INSERT INTO ingest_stage_moves (epoch) SELECT epoch FROM stage.main.ingest_stage_epoch;
COMMIT;
