-- Epochs whose staged rows reached the main tables; written in the same transaction as the rows,
-- so recovery after a crash between "copied" and "emptied" never copies them twice. (On the main
-- database, so not in the stage's transaction: a DuckDB transaction writes to one database.)
CREATE TABLE IF NOT EXISTS ingest_stage_moves (epoch BIGINT NOT NULL, moved_at TIMESTAMP DEFAULT current_timestamp);
