-- Search reads a narrow copy of each lead's search text and status. A search's total is
-- counted by rechecking each match the trigram index finds (it is lossy for `LIKE`), one heap
-- row each: in this table about 70 leads fit a page, where `leads` holds about 9, so a search
-- matching 25,000 of a project's 800,000 leads reads 12,000 pages instead of 28,000. The
-- status is copied so that a search's per-status counts (the inbox's tabs) need no other row
-- either. A trigger keeps the copy, in the transaction that changes the lead.

CREATE TABLE lead_search (
    project_id  bigint NOT NULL,
    id          bigint NOT NULL,
    status      text   NOT NULL,
    search_text text   NOT NULL,
    PRIMARY KEY (project_id, id)
);
INSERT INTO lead_search (project_id, id, status, search_text)
    SELECT project_id, id, status, search_text FROM leads ORDER BY project_id, id;
DROP INDEX leads_search;
-- Keyed by project too (btree_gin), so that a search within a small project can read
-- that project's entries alone.
CREATE INDEX lead_search_text ON lead_search
    USING gin (project_id, search_text gin_trgm_ops);

CREATE FUNCTION lead_search_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO lead_search (project_id, id, status, search_text)
            VALUES (NEW.project_id, NEW.id, NEW.status, NEW.search_text);
    ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM lead_search WHERE project_id = OLD.project_id AND id = OLD.id;
    ELSE
        UPDATE lead_search SET status = NEW.status, search_text = NEW.search_text
            WHERE project_id = NEW.project_id AND id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER lead_search_copy AFTER INSERT OR DELETE ON leads
    FOR EACH ROW EXECUTE FUNCTION lead_search_copy();
CREATE TRIGGER lead_search_update AFTER UPDATE OF status, search_text ON leads
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.search_text IS DISTINCT FROM NEW.search_text)
    EXECUTE FUNCTION lead_search_copy();
