-- The first and last touch of each lead's channel path, which reports group by
-- (`leadtrack_core::report::touch_columns` of the lead's data, written with the lead). Rows
-- already there are filled by `backfill_touches` right after this step: parsing channel paths
-- (JSON, or the URL-encoded cookie) is core's work, not SQL's.

ALTER TABLE leads ADD COLUMN first_source   TEXT;
ALTER TABLE leads ADD COLUMN first_medium   TEXT;
ALTER TABLE leads ADD COLUMN first_campaign TEXT;
ALTER TABLE leads ADD COLUMN last_source    TEXT;
ALTER TABLE leads ADD COLUMN last_medium    TEXT;
ALTER TABLE leads ADD COLUMN last_campaign  TEXT;
