-- The ingest stage: a second database file, attached as `stage`, that takes the writer's commits
-- while the main database checkpoints (a CHECKPOINT blocks every commit to its own database, for
-- seconds at high ingest rates, but not commits to another one). Recreated empty from the main
-- tables' current columns at every start, after recovery has moved whatever it held, in one
-- transaction: a full disk or a kill part way leaves the previous stage (or none), never half of one.
BEGIN TRANSACTION;
DROP TABLE IF EXISTS stage.main.span_store;
DROP TABLE IF EXISTS stage.main.metric_store;
DROP TABLE IF EXISTS stage.main.ingest_stage_epoch;
CREATE TABLE stage.main.span_store AS FROM span_store LIMIT 0;
CREATE TABLE stage.main.metric_store AS FROM metric_store LIMIT 0;
CREATE TABLE stage.main.ingest_stage_epoch (epoch BIGINT NOT NULL);
COMMIT;
