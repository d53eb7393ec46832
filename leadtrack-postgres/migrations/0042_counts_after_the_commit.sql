-- Issue #48: a new lead is counted (per status, per facet's value) after its commit, not
-- in the transaction that inserts it. Concurrent creates each upserted the same few count
-- rows and waited on each other's locks: the server's statements for a create, replayed by
-- pgbench at 64 clients, ran 548 transactions a second with the counts and 894 without.
--
-- The insert's statement trigger notes the new leads in `lead_uncounted`. A counter
-- (`leads_count_uncounted`, called by each server after its creates and every second)
-- takes up to a batch of them (`FOR UPDATE SKIP LOCKED`, so that servers on one database
-- share them), locks their leads `FOR SHARE` and counts them as they are then. A reader
-- adds the uncounted leads to the kept counts (`lead_status_totals`, `lead_facet_totals`),
-- so that a total is exact at once. A change or deletion of an uncounted lead leaves the
-- counts alone, since the counter counts the lead as it finds it: its `FOR SHARE` lock
-- makes a change wait for the counter's commit, or the counter for the change's, and each
-- then sees what the other did.
--
-- A statement that changes or deletes counted leads moves their counts once, set-based,
-- locking the count rows in one order (facets before statuses, each table's rows in the
-- order of their keys), as the counter does. The row triggers this replaces locked them
-- lead by lead, so that two statements changing several leads each could wait on each
-- other until PostgreSQL found the deadlock (`deadlock_timeout`).

CREATE TABLE lead_uncounted (
    project_id bigint NOT NULL,
    id         bigint NOT NULL,
    PRIMARY KEY (project_id, id)
);

CREATE OR REPLACE FUNCTION leads_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_uncounted (project_id, id) SELECT project_id, id FROM inserted;
    INSERT INTO lead_search (project_id, id, status, search_text)
        SELECT project_id, id, status, search_text FROM inserted;
    RETURN NULL;
END
$$;

-- Counts up to `batch` uncounted leads, oldest first; how many it took. They are counted
-- as a statement's changes are (`leads_count_moved`, below), in its one lock order. A
-- transaction that changes leads in several statements locks their counts statement by
-- statement, and so could wait on the counter while the counter waits on it: the counter
-- then gives up within its `lock_timeout` (and counts the leads in its next round), so
-- that a request never waits for PostgreSQL to find the deadlock. The changes it is
-- ordered with run at READ COMMITTED, whose next statement sees the counter's commit.
CREATE FUNCTION leads_count_uncounted(batch int) RETURNS int LANGUAGE plpgsql
SET lock_timeout = '50ms' AS $$
DECLARE
    projects bigint[];
    ids      bigint[];
BEGIN
    WITH taken AS (
        DELETE FROM lead_uncounted WHERE (project_id, id) IN (
            SELECT project_id, id FROM lead_uncounted ORDER BY project_id, id LIMIT batch
            FOR UPDATE SKIP LOCKED)
        RETURNING project_id, id
    )
    SELECT array_agg(project_id), array_agg(id) INTO projects, ids FROM taken;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    -- The next statement reads the leads as they are once these locks are held; taken
    -- from `lead_uncounted` in this transaction, they count as counted in it.
    PERFORM 1 FROM leads l JOIN unnest(projects, ids) AS t (project_id, id)
        ON l.project_id = t.project_id AND l.id = t.id
        ORDER BY l.project_id, l.id FOR SHARE OF l;
    PERFORM leads_count_moved('{}', ARRAY(
        SELECT l FROM leads l JOIN unnest(projects, ids) AS t (project_id, id)
            ON l.project_id = t.project_id AND l.id = t.id));
    RETURN cardinality(ids);
END
$$;

-- The counts a reader sees: the kept ones and the leads not counted yet.
CREATE VIEW lead_status_totals AS
    SELECT project_id, status, total FROM lead_status_counts
    UNION ALL
    SELECT l.project_id, l.status, 1::bigint FROM lead_uncounted u
        JOIN leads l ON l.project_id = u.project_id AND l.id = u.id;
CREATE VIEW lead_facet_totals AS
    SELECT project_id, facet, value, status, total FROM lead_facet_counts
    UNION ALL
    SELECT l.project_id, f.facet, f.value, l.status, 1::bigint FROM lead_uncounted u
        JOIN leads l ON l.project_id = u.project_id AND l.id = u.id
        CROSS JOIN LATERAL lead_facets(l) f;

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
