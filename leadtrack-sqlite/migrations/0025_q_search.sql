-- The `q` search: its folded text (filled by `leads::backfill_q_text`), in a trigram index of
-- its own whose rowids carry the lead's project, as `leads_search`'s.

ALTER TABLE leads ADD COLUMN q_text TEXT NOT NULL DEFAULT '';
CREATE VIRTUAL TABLE leads_q USING fts5 (
    q_text, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1'
);
CREATE TRIGGER leads_q_insert AFTER INSERT ON leads BEGIN
    INSERT INTO leads_q (rowid, q_text) VALUES (new.project_id << 36 | new.id, new.q_text);
END;
CREATE TRIGGER leads_q_update AFTER UPDATE OF q_text ON leads BEGIN
    DELETE FROM leads_q WHERE rowid = old.project_id << 36 | old.id;
    INSERT INTO leads_q (rowid, q_text) VALUES (new.project_id << 36 | new.id, new.q_text);
END;
CREATE TRIGGER leads_q_delete AFTER DELETE ON leads BEGIN
    DELETE FROM leads_q WHERE rowid = old.project_id << 36 | old.id;
END;
INSERT INTO leads_q (leads_q, rank) VALUES ('automerge', 16);
INSERT INTO leads_q (leads_q, rank) VALUES ('crisismerge', 64);
