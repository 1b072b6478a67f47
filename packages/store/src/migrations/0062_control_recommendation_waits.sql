-- Why no policy may auto-apply an open recommendation whatever its confidence (a human decides, or it
-- must persist for another tick); NULL when a policy may.
ALTER TABLE control_recommendations ADD COLUMN IF NOT EXISTS waits VARCHAR;
