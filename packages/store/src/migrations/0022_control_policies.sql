-- Auto-apply policies changed through PUT /api/policies. Kept only while the config file's policies
-- are the ones they were based on (config_hash); editing the file resets them.
CREATE TABLE IF NOT EXISTS control_policies (
  id INTEGER PRIMARY KEY,
  config_hash VARCHAR NOT NULL,
  policies JSON NOT NULL,
  updated_by VARCHAR NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
