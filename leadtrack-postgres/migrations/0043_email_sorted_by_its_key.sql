-- Issue #48: emails sort by their matching key (trimmed, lowercased: core's `email_key`),
-- compared byte by byte as SQLite compares it, so that both backends list leads alike.
-- The lookups by key keep their partial index, whose collation is the column's.

DROP INDEX leads_email;
CREATE INDEX leads_email ON leads (project_id, (email_key COLLATE "C"), id);
