-- Issue #48: a lead's email, phone and company name as written are in its data, and their
-- own columns were written with every lead and read by nothing: lookups, duplicates and the
-- email's sort read the keys (`email_key`, `phone_key`), and `search` and `q` their texts.
-- About 69 bytes a lead, 66 MiB at a million leads. Nothing in the schema names them, so
-- SQLite drops each, rewriting every row in place (17 s at a million leads): an upgraded
-- table keeps its pages, whose freed space its leads reuse as they are next written (a
-- `VACUUM` returns it), and new leads are that much smaller.

ALTER TABLE leads DROP COLUMN email;
ALTER TABLE leads DROP COLUMN phone;
ALTER TABLE leads DROP COLUMN company_name;
