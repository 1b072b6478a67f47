-- What of the staged rows reached the main tables, written in the same transaction as the rows, so
-- recovery after a crash part way never copies a row twice. (On the main database, so not in the
-- stage's transaction: a DuckDB transaction writes to one database.) The move copies a table in
-- slices of rowids, one transaction each, recording (epoch, table, through_rowid); a row with
-- both NULL marks the whole epoch moved (as every row did before moves were sliced).
-- A new data dir gets every column at once; the ALTERs add them to older ones (an ADD COLUMN on this
-- table, whose moved_at has a function default, must never wait in the WAL: create-store.ts).
CREATE TABLE IF NOT EXISTS ingest_stage_moves (
  epoch BIGINT NOT NULL, moved_at TIMESTAMP DEFAULT current_timestamp, table_name VARCHAR, through_rowid BIGINT
);
ALTER TABLE ingest_stage_moves ADD COLUMN IF NOT EXISTS table_name VARCHAR;
ALTER TABLE ingest_stage_moves ADD COLUMN IF NOT EXISTS through_rowid BIGINT;
