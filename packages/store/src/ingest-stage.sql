-- The ingest stage: a second database file, attached as `stage`, that takes the writer's commits
-- while the main database checkpoints (a CHECKPOINT blocks every commit to its own database, for
-- seconds at high ingest rates, but not commits to another one). Recreated empty from the main
-- tables' current columns at every start, after recovery has moved whatever it held.
DROP TABLE IF EXISTS stage.main.span_store;
DROP TABLE IF EXISTS stage.main.metric_store;
CREATE TABLE stage.main.span_store AS FROM span_store LIMIT 0;
CREATE TABLE stage.main.metric_store AS FROM metric_store LIMIT 0;
CREATE TABLE IF NOT EXISTS stage.main.ingest_stage_epoch (epoch BIGINT NOT NULL);
-- Epochs whose staged rows reached the main tables; written in the same transaction as the rows,
-- so recovery after a crash between "copied" and "emptied" never copies them twice.
CREATE TABLE IF NOT EXISTS ingest_stage_moves (epoch BIGINT NOT NULL, moved_at TIMESTAMP DEFAULT current_timestamp);
