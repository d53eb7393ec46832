-- The filters of every source (the form exact or in any case, first touch, rating, click ids),
-- each read along an index by creation time, and counted from kept counts: per project, facet
-- (the filtered column, as core's `LeadQuery::facets` names it), value and status, how many
-- leads have it, spread over 16 slots as `lead_status_counts` is. A click id's value is its
-- flag as text (`true`, `false`).

CREATE INDEX leads_form_key       ON leads (project_id, form_key, created_at, id) INCLUDE (status);
CREATE INDEX leads_first_source   ON leads (project_id, first_source, created_at, id) INCLUDE (status);
CREATE INDEX leads_first_medium   ON leads (project_id, first_medium, created_at, id) INCLUDE (status);
CREATE INDEX leads_first_campaign ON leads (project_id, first_campaign, created_at, id) INCLUDE (status);
CREATE INDEX leads_conversion     ON leads (project_id, conversion_id, created_at, id) INCLUDE (status);
CREATE INDEX leads_has_gclid      ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_gclid;
CREATE INDEX leads_has_cid        ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_cid;
CREATE INDEX leads_has_fbp        ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_fbp;
CREATE INDEX leads_has_fbc        ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_fbc;
CREATE INDEX leads_has_msclkid    ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_msclkid;
CREATE INDEX leads_has_li_fat_id  ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_li_fat_id;

CREATE TABLE lead_facet_counts (
    project_id bigint   NOT NULL REFERENCES projects (id),
    facet      text     NOT NULL,
    value      text     NOT NULL,
    status     text     NOT NULL,
    slot       smallint NOT NULL,
    total      bigint   NOT NULL,
    PRIMARY KEY (project_id, facet, value, status, slot)
);
-- A lead's facets with a value.
CREATE FUNCTION lead_facets(l leads) RETURNS TABLE (facet text, value text)
LANGUAGE sql STABLE AS $$
    SELECT f.facet, f.value FROM (VALUES
        ('form_name', l.form_name),
        ('form_key', l.form_key),
        ('first_source', l.first_source),
        ('first_medium', l.first_medium),
        ('first_campaign', l.first_campaign),
        ('conversion_id', l.conversion_id),
        ('has_gclid', l.has_gclid::text),
        ('has_cid', l.has_cid::text),
        ('has_fbp', l.has_fbp::text),
        ('has_fbc', l.has_fbc::text),
        ('has_msclkid', l.has_msclkid::text),
        ('has_li_fat_id', l.has_li_fat_id::text)
    ) AS f (facet, value) WHERE f.value IS NOT NULL
$$;
INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
    SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
    FROM leads l CROSS JOIN LATERAL lead_facets(l) f
    GROUP BY 1, 2, 3, 4, 5;
-- The counts a lead leaves and joins, summed so that no count is touched twice, and
-- locked in one order (the key's), so that two writes never wait for each other's.
CREATE FUNCTION leads_count_facets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (OLD.status, OLD.form_name, OLD.form_key, OLD.first_source,
            OLD.first_medium, OLD.first_campaign, OLD.conversion_id, OLD.has_gclid,
            OLD.has_cid, OLD.has_fbp, OLD.has_fbc, OLD.has_msclkid, OLD.has_li_fat_id)
        IS NOT DISTINCT FROM (NEW.status, NEW.form_name, NEW.form_key, NEW.first_source,
            NEW.first_medium, NEW.first_campaign, NEW.conversion_id, NEW.has_gclid,
            NEW.has_cid, NEW.has_fbp, NEW.has_fbc, NEW.has_msclkid, NEW.has_li_fat_id) THEN
        RETURN NULL;
    END IF;
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT project_id, facet, value, status, slot, sum(change) FROM (
            SELECT OLD.project_id AS project_id, f.facet, f.value, OLD.status AS status,
                (OLD.id % 16)::smallint AS slot, -1 AS change
            FROM lead_facets(OLD) f WHERE TG_OP <> 'INSERT'
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
CREATE TRIGGER leads_count_facets AFTER INSERT OR UPDATE OR DELETE ON leads
    FOR EACH ROW EXECUTE FUNCTION leads_count_facets();
