-- Spam and duplicates: why a lead is spam, the lead it duplicates, and each project's spam
-- rules (a JSON object, `{}`: the defaults).

ALTER TABLE leads ADD COLUMN spam_reason text;
ALTER TABLE leads ADD COLUMN duplicate_of bigint;
ALTER TABLE leads ADD COLUMN duplicated boolean NOT NULL DEFAULT false;
CREATE INDEX leads_duplicate ON leads (project_id, duplicate_of, created_at, id)
    WHERE duplicate_of IS NOT NULL;
ALTER TABLE projects ADD COLUMN spam_rules text NOT NULL DEFAULT '{}';
