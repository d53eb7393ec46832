-- The form name as the case-insensitive `form` filter matches it (core's `matching::form_key`,
-- filled by `leads::backfill` right after).

ALTER TABLE leads ADD COLUMN form_key text;
