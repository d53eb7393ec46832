-- The lookup indexes hold only the leads that have the value looked up: a lead without a
-- `uniqueIdentifier` (most of them), email or phone costs no entry. A lookup `= ?` implies the
-- value is there, so each index still serves it.

DROP INDEX leads_identifier;
CREATE INDEX leads_identifier ON leads (project_id, unique_identifier, created_at, id)
    WHERE unique_identifier IS NOT NULL;
DROP INDEX leads_email_key;
CREATE INDEX leads_email_key ON leads (project_id, email_key, created_at, id)
    WHERE email_key IS NOT NULL;
DROP INDEX leads_phone_key;
CREATE INDEX leads_phone_key ON leads (project_id, phone_key, created_at, id)
    WHERE phone_key IS NOT NULL;
