-- A statement that changes or deletes counted leads adjusts their counts once, set-based,
-- locking the count rows in one order (facets before statuses, each table's rows in the
-- order of their keys), as the counter of new leads does (migration 42). The row triggers
-- it replaces locked them lead by lead, so that two statements changing several leads each
-- could wait on each other until PostgreSQL found the deadlock (`deadlock_timeout`).
-- Leads not counted yet are left to the counter.

DROP TRIGGER leads_count_status ON leads;
DROP TRIGGER leads_count_facets ON leads;
DROP FUNCTION leads_count_status();
DROP FUNCTION leads_count_facets();

-- Whether the lead is counted (not left to the counter).
CREATE FUNCTION lead_is_counted(project bigint, lead bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT NOT EXISTS (SELECT 1 FROM lead_uncounted WHERE project_id = project AND id = lead)
$$;

-- The counted leads of `gone` (counted -1) and `now` (+1).
CREATE FUNCTION leads_counted_moves(gone leads[], now leads[])
RETURNS TABLE (lead leads, change int) LANGUAGE sql STABLE AS $$
    SELECT m.lead, m.change FROM (
        SELECT l AS lead, -1 AS change FROM unnest(gone) AS l
        UNION ALL
        SELECT l, 1 FROM unnest(now) AS l
    ) AS m
    WHERE lead_is_counted((m.lead).project_id, (m.lead).id)
$$;

-- Moves the counts from the leads as they were (`gone`) to the leads as they are now
-- (`now`; none for a deletion); a lead whose counted values did not change moves nothing
-- and locks no count. PL/pgSQL, whose plans are kept: a SQL function's are made again on
-- every call.
CREATE FUNCTION leads_count_moved(gone leads[], now leads[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT (m.lead).project_id, f.facet, f.value, (m.lead).status,
            ((m.lead).id % 16)::smallint, sum(m.change)
        FROM leads_counted_moves(gone, now) m CROSS JOIN LATERAL lead_facets(m.lead) f
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(m.change) <> 0
        ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (project_id, facet, value, status, slot)
        DO UPDATE SET total = lead_facet_counts.total + excluded.total;
    INSERT INTO lead_status_counts (project_id, status, slot, total)
        SELECT (m.lead).project_id, (m.lead).status, ((m.lead).id % 16)::smallint,
            sum(m.change)
        FROM leads_counted_moves(gone, now) m
        GROUP BY 1, 2, 3 HAVING sum(m.change) <> 0
        ORDER BY 1, 2, 3
        ON CONFLICT (project_id, status, slot)
        DO UPDATE SET total = lead_status_counts.total + excluded.total;
END
$$;

-- A statement that changed only leads not counted yet (a create's own changes of its lead)
-- touches no count.
CREATE FUNCTION leads_count_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM gone o WHERE lead_is_counted(o.project_id, o.id)) THEN
        RETURN NULL;
    END IF;
    PERFORM leads_count_moved(ARRAY(SELECT o::leads FROM gone o),
        ARRAY(SELECT n::leads FROM now n));
    RETURN NULL;
END
$$;
CREATE TRIGGER leads_count_changed AFTER UPDATE ON leads
    REFERENCING OLD TABLE AS gone NEW TABLE AS now
    FOR EACH STATEMENT EXECUTE FUNCTION leads_count_changed();

CREATE FUNCTION leads_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM gone o WHERE lead_is_counted(o.project_id, o.id)) THEN
        RETURN NULL;
    END IF;
    PERFORM leads_count_moved(ARRAY(SELECT o::leads FROM gone o), '{}');
    RETURN NULL;
END
$$;
CREATE TRIGGER leads_count_deleted AFTER DELETE ON leads
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION leads_count_deleted();
