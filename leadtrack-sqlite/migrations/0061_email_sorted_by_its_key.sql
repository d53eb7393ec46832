-- Issue #48: emails sort by their matching key (trimmed, lowercased: core's `email_key`),
-- through the index that finds a person's leads by it, which now holds every lead (a lead
-- without an email has a null key, sorted last). The email's own sort index goes: it put
-- each new lead on a random page of one more index, about a seventh of the writer's time
-- to store a lead (docs/performance.md).

DROP INDEX leads_email;
DROP INDEX leads_email_key;
CREATE INDEX leads_email_key ON leads (project_id, email_key, created_at, id);

-- Without statistics, SQLite reads a project's leads through the newest of the indexes
-- that serve it equally, when no other filter or order picks one (the count of a `q`
-- checked on each lead, say). That must stay the inbox's order, whose leads lie in the
-- order of their rows, not the emails' (the listing's plan tests hold it there).
DROP INDEX leads_created;
CREATE INDEX leads_created ON leads (project_id, created_at, id, status);
