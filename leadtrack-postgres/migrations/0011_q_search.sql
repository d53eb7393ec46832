-- The `q` search: its folded text (filled by `leads::backfill_q_text` right after), with a
-- trigram index keyed by project as `lead_search_text` is.

ALTER TABLE leads ADD COLUMN q_text text NOT NULL DEFAULT '';
CREATE INDEX leads_q_text ON leads USING gin (project_id, q_text gin_trgm_ops);
