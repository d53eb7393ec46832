-- Issue #48: a lead's email, phone and company name as written are in its data, and their
-- own columns were written with every lead and read by nothing: lookups, duplicates and the
-- email's sort read the keys (`email_key`, `phone_key`), and `search` and `q` their texts.
-- About 53 bytes a lead, 50 MiB at a million leads. Nothing in the schema names them, so
-- SQLite drops each by rewriting the table: upgrading a million-lead store takes a minute or
-- two, and the file keeps the freed pages for new leads.

ALTER TABLE leads DROP COLUMN email;
ALTER TABLE leads DROP COLUMN phone;
ALTER TABLE leads DROP COLUMN company_name;
