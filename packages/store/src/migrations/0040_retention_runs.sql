-- One row per table per retention run (see retention/run-retention.ts). `committed` rows whose
-- files still sit in export/.staging are published on the next start; `failed` runs changed nothing.
CREATE TABLE IF NOT EXISTS retention_runs (
  run_id VARCHAR NOT NULL,
  target VARCHAR NOT NULL,
  state VARCHAR NOT NULL,
  started_at TIMESTAMP NOT NULL,
  finished_at TIMESTAMP,
  watermark_ns BIGINT,
  cutoff_ns BIGINT,
  rows_exported BIGINT NOT NULL DEFAULT 0,
  rows_deleted BIGINT NOT NULL DEFAULT 0,
  bytes_exported BIGINT NOT NULL DEFAULT 0,
  -- Paths relative to the export folder, e.g. spans/date=2025-01-01/hour=07/r….parquet
  files JSON,
  error VARCHAR,
  duration_ms DOUBLE
);
