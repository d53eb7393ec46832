-- The trigram index, keyed by project. Its rowid is the lead's project and id (`project_id <<
-- 36 | id`), so a search within a project reads only that project's part of each trigram's
-- list, and counts its matches without visiting a lead. It is contentless (the leads hold the
-- text) and case-sensitive (search text and terms are lowercased before they get here), so a
-- phrase of the term's trigrams matches exactly the leads whose text contains the term.

DROP TRIGGER leads_search_insert;
DROP TRIGGER leads_search_update;
DROP TRIGGER leads_search_delete;
DROP TABLE leads_search;
CREATE VIRTUAL TABLE leads_search USING fts5 (
    search_text, content = '', contentless_delete = 1,
    tokenize = 'trigram case_sensitive 1'
);
INSERT INTO leads_search (rowid, search_text)
    SELECT project_id << 36 | id, search_text FROM leads;
CREATE TRIGGER leads_search_insert AFTER INSERT ON leads BEGIN
    INSERT INTO leads_search (rowid, search_text)
        VALUES (new.project_id << 36 | new.id, new.search_text);
END;
CREATE TRIGGER leads_search_update AFTER UPDATE OF search_text ON leads BEGIN
    DELETE FROM leads_search WHERE rowid = old.project_id << 36 | old.id;
    INSERT INTO leads_search (rowid, search_text)
        VALUES (new.project_id << 36 | new.id, new.search_text);
END;
CREATE TRIGGER leads_search_delete AFTER DELETE ON leads BEGIN
    DELETE FROM leads_search WHERE rowid = old.project_id << 36 | old.id;
END;
