-- Marks the stage's epoch as moved once every slice of its rows is in the main tables, and drops
-- the epoch's slice records with it (one row per epoch stays, as before moves were sliced: the
-- live views read this table on every query). The stage is emptied after it (empty-stage.sql).
-- Skipped by the caller when the epoch was already marked.
BEGIN TRANSACTION;
INSERT INTO ingest_stage_moves (epoch) SELECT epoch FROM stage.main.ingest_stage_epoch;
DELETE FROM ingest_stage_moves WHERE table_name IS NOT NULL AND epoch IN (SELECT epoch FROM stage.main.ingest_stage_epoch);
COMMIT;
