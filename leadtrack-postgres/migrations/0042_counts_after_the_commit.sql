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

-- The row triggers of migrations 26 and 33, for counted leads only.
CREATE OR REPLACE FUNCTION leads_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM lead_uncounted WHERE project_id = OLD.project_id AND id = OLD.id)
    THEN
        RETURN NULL;
    END IF;
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
CREATE OR REPLACE FUNCTION leads_count_facets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (OLD.status, OLD.form_name, OLD.form_key, OLD.first_source,
            OLD.first_medium, OLD.first_campaign, OLD.conversion_id, OLD.has_gclid,
            OLD.has_cid, OLD.has_fbp, OLD.has_fbc, OLD.has_msclkid, OLD.has_li_fat_id,
            OLD.has_gbraid, OLD.has_ttclid, OLD.has_rdt_cid, OLD.has_sccid, OLD.has_epik,
            OLD.has_twclid)
        IS NOT DISTINCT FROM (NEW.status, NEW.form_name, NEW.form_key, NEW.first_source,
            NEW.first_medium, NEW.first_campaign, NEW.conversion_id, NEW.has_gclid,
            NEW.has_cid, NEW.has_fbp, NEW.has_fbc, NEW.has_msclkid, NEW.has_li_fat_id,
            NEW.has_gbraid, NEW.has_ttclid, NEW.has_rdt_cid, NEW.has_sccid, NEW.has_epik,
            NEW.has_twclid) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM lead_uncounted WHERE project_id = OLD.project_id AND id = OLD.id)
    THEN
        RETURN NULL;
    END IF;
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT project_id, facet, value, status, slot, sum(change) FROM (
            SELECT OLD.project_id AS project_id, f.facet, f.value, OLD.status AS status,
                (OLD.id % 16)::smallint AS slot, -1 AS change
            FROM lead_facets(OLD) f
            UNION ALL
            SELECT NEW.project_id, f.facet, f.value, NEW.status, (NEW.id % 16)::smallint, 1
            FROM lead_facets(NEW) f WHERE TG_OP <> 'DELETE'
        ) AS changes
        GROUP BY project_id, facet, value, status, slot HAVING sum(change) <> 0
        ORDER BY project_id, facet, value, status, slot
        ON CONFLICT (project_id, facet, value, status, slot)
        DO UPDATE SET total = lead_facet_counts.total + excluded.total;
    RETURN NULL;
END
$$;

-- Counts up to `batch` uncounted leads, oldest first; how many it took. The counts are
-- locked in the order the row triggers lock them: facets before statuses, each table's
-- rows in the order of their keys. A change of several leads that locked their counts in
-- another order (lead by lead, or over several statements) could wait on the counter while
-- the counter waits on it: the counter then gives up within its `lock_timeout` (and counts
-- the leads in its next round), so that a request never waits for PostgreSQL to find the
-- deadlock. The changes it is ordered with run at READ COMMITTED, whose next statement
-- sees the counter's commit.
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
    -- Each statement below reads the leads as they are once these locks are held.
    PERFORM 1 FROM leads l JOIN unnest(projects, ids) AS t (project_id, id)
        ON l.project_id = t.project_id AND l.id = t.id
        ORDER BY l.project_id, l.id FOR SHARE OF l;
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
        FROM leads l JOIN unnest(projects, ids) AS t (project_id, id)
            ON l.project_id = t.project_id AND l.id = t.id
        CROSS JOIN LATERAL lead_facets(l) f
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (project_id, facet, value, status, slot)
        DO UPDATE SET total = lead_facet_counts.total + excluded.total;
    INSERT INTO lead_status_counts (project_id, status, slot, total)
        SELECT l.project_id, l.status, (l.id % 16)::smallint, count(*)
        FROM leads l JOIN unnest(projects, ids) AS t (project_id, id)
            ON l.project_id = t.project_id AND l.id = t.id
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
        ON CONFLICT (project_id, status, slot)
        DO UPDATE SET total = lead_status_counts.total + excluded.total;
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
