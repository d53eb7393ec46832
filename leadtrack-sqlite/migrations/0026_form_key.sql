-- The form name as the case-insensitive `form` filter matches it (core's `matching::form_key`,
-- filled by `leads::backfill_form_key`).

ALTER TABLE leads ADD COLUMN form_key TEXT;
