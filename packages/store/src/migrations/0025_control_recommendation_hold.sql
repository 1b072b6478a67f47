-- The guard holding an open recommendation back at the last tick ({rule, why}); NULL when none does.
ALTER TABLE control_recommendations ADD COLUMN IF NOT EXISTS hold JSON;
