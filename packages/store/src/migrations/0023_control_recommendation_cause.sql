-- Why a shift_traffic recommendation moves traffic (incident, recovery, efficiency, resource):
-- recovery gives traffic back only to pools that lost it to an incident.
ALTER TABLE control_recommendations ADD COLUMN IF NOT EXISTS cause VARCHAR;
