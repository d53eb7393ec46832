-- A statement that inserts leads counts them and copies them to the search table once,
-- set-based, rather than once a lead: an import's batch of hundreds touched the same few count
-- rows hundreds of times. Updates and deletes keep their row triggers.

DROP TRIGGER leads_count_status ON leads;
CREATE TRIGGER leads_count_status AFTER UPDATE OF status OR DELETE ON leads
    FOR EACH ROW EXECUTE FUNCTION leads_count_status();
DROP TRIGGER leads_count_facets ON leads;
CREATE TRIGGER leads_count_facets AFTER UPDATE OR DELETE ON leads
    FOR EACH ROW EXECUTE FUNCTION leads_count_facets();
DROP TRIGGER lead_search_copy ON leads;
CREATE TRIGGER lead_search_copy AFTER DELETE ON leads
    FOR EACH ROW EXECUTE FUNCTION lead_search_copy();
-- The row functions without their insert branches, which no trigger runs any more.
CREATE OR REPLACE FUNCTION leads_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM leads_count_add(OLD.project_id, OLD.id, OLD.status, -1);
    ELSIF OLD.status < NEW.status THEN
        PERFORM leads_count_add(OLD.project_id, OLD.id, OLD.status, -1);
        PERFORM leads_count_add(NEW.project_id, NEW.id, NEW.status, 1);
    ELSIF OLD.status > NEW.status THEN
        PERFORM leads_count_add(NEW.project_id, NEW.id, NEW.status, 1);
        PERFORM leads_count_add(OLD.project_id, OLD.id, OLD.status, -1);
    END IF;
    RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION lead_search_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM lead_search WHERE project_id = OLD.project_id AND id = OLD.id;
    ELSE
        UPDATE lead_search SET status = NEW.status, search_text = NEW.search_text
            WHERE project_id = NEW.project_id AND id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;
-- The counts are locked in the order the row triggers lock them: facets before
-- statuses, each table's rows in the order of their keys.
CREATE FUNCTION leads_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
        FROM inserted l CROSS JOIN LATERAL lead_facets(l) f
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (project_id, facet, value, status, slot)
        DO UPDATE SET total = lead_facet_counts.total + excluded.total;
    INSERT INTO lead_status_counts (project_id, status, slot, total)
        SELECT project_id, status, (id % 16)::smallint, count(*)
        FROM inserted
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
        ON CONFLICT (project_id, status, slot)
        DO UPDATE SET total = lead_status_counts.total + excluded.total;
    INSERT INTO lead_search (project_id, id, status, search_text)
        SELECT project_id, id, status, search_text FROM inserted;
    RETURN NULL;
END
$$;
CREATE TRIGGER leads_inserted AFTER INSERT ON leads
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION leads_inserted();
