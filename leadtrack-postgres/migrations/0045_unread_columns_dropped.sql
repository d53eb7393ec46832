-- Issue #48: a lead's email, phone and company name as written are in its data, and their
-- own columns were written with every lead and read by nothing: lookups, duplicates and the
-- email's sort read the keys (`email_key`, `phone_key`), and `search` and `q` their texts.
-- PostgreSQL drops a column at once; each row's space returns as the row is next written.

ALTER TABLE leads DROP COLUMN email, DROP COLUMN phone, DROP COLUMN company_name;
