-- Hardening. A project's allowed browser origins (a JSON array of strings, empty: any). The
-- route each lead was created by (`browser` or `server`): a browser create merges only into
-- browser leads, so one event id may name one lead per route, and the dedup index holds per
-- route. Leads from before this migration count as `server`: nobody can tell which route made
-- them, and wrongly protecting one from a browser merge costs a duplicate, while the opposite
-- lets anyone overwrite it.

ALTER TABLE projects ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';
ALTER TABLE leads ADD COLUMN created_via TEXT NOT NULL DEFAULT 'server';
DROP INDEX leads_event;
CREATE UNIQUE INDEX leads_event ON leads (project_id, unique_event_id, created_via)
    WHERE unique_event_id IS NOT NULL;
