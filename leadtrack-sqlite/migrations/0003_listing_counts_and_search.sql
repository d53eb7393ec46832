-- What keeps listings fast in large projects: a per-project lead count for the unfiltered
-- total, and a trigram index answering substring searches.

CREATE TABLE lead_counts (
    project_id INTEGER PRIMARY KEY REFERENCES projects (id),
    total      INTEGER NOT NULL
) STRICT;
INSERT INTO lead_counts (project_id, total)
    SELECT project_id, count(*) FROM leads GROUP BY project_id;
CREATE TRIGGER leads_count_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_counts (project_id, total) VALUES (new.project_id, 1)
        ON CONFLICT (project_id) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_count_delete AFTER DELETE ON leads BEGIN
    UPDATE lead_counts SET total = total - 1 WHERE project_id = old.project_id;
END;

CREATE VIRTUAL TABLE leads_search USING fts5 (
    search_text, content = 'leads', content_rowid = 'id', tokenize = 'trigram'
);
INSERT INTO leads_search (leads_search) VALUES ('rebuild');
CREATE TRIGGER leads_search_insert AFTER INSERT ON leads BEGIN
    INSERT INTO leads_search (rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER leads_search_update AFTER UPDATE OF search_text ON leads BEGIN
    INSERT INTO leads_search (leads_search, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
    INSERT INTO leads_search (rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER leads_search_delete AFTER DELETE ON leads BEGIN
    INSERT INTO leads_search (leads_search, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
END;
