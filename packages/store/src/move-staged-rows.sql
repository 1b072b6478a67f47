-- Marks the stage's epoch as moved once every slice of its rows is in the main tables; the stage
-- is emptied after it (empty-stage.sql). Skipped by the caller when the epoch was already marked.
INSERT INTO ingest_stage_moves (epoch) SELECT epoch FROM stage.main.ingest_stage_epoch;
