-- One row per OTLP data point (gauge, sum, histogram, summary). Column order matches
-- METRIC_POINT_COLUMNS in @governor/otlp.
CREATE TABLE IF NOT EXISTS metric_store (
  name VARCHAR NOT NULL,
  type VARCHAR NOT NULL,
  unit VARCHAR,
  time_ns BIGINT NOT NULL,
  start_ns BIGINT,
  value DOUBLE,
  count DOUBLE,
  sum DOUBLE,
  min DOUBLE,
  max DOUBLE,
  bucket_counts JSON,
  explicit_bounds JSON,
  quantiles JSON,
  is_monotonic BOOLEAN NOT NULL,
  temporality UTINYINT NOT NULL,
  service VARCHAR,
  pool VARCHAR,
  region VARCHAR,
  replica VARCHAR,
  model VARCHAR,
  attributes JSON,
  resource JSON
);

CREATE OR REPLACE VIEW metric_points AS SELECT * FROM metric_store;
