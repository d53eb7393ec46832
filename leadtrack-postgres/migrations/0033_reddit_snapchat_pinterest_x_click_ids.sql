-- The click ids the capture script keeps since #51 get flags like the others (issue #50):
-- Reddit's `rdt_cid`, Snapchat's `ScCid`, Pinterest's `epik` (or its tag's cookie `_epik`)
-- and X's `twclid`; each a partial index by creation time and kept counts. As in 0032, the
-- leads are flagged before the facets' functions know the flags, then the new facets are
-- counted from the leads.
ALTER TABLE leads
    ADD COLUMN has_rdt_cid boolean NOT NULL DEFAULT false,
    ADD COLUMN has_sccid boolean NOT NULL DEFAULT false,
    ADD COLUMN has_epik boolean NOT NULL DEFAULT false,
    ADD COLUMN has_twclid boolean NOT NULL DEFAULT false;
UPDATE leads SET
    has_rdt_cid = coalesce(jsonb_typeof(data::jsonb #> '{attributionData,rdt_cid}') = 'string'
        AND btrim(data::jsonb #>> '{attributionData,rdt_cid}') <> '', false),
    has_sccid = coalesce(jsonb_typeof(data::jsonb #> '{attributionData,ScCid}') = 'string'
        AND btrim(data::jsonb #>> '{attributionData,ScCid}') <> '', false),
    has_epik = coalesce(
        (jsonb_typeof(data::jsonb #> '{attributionData,epik}') = 'string'
            AND btrim(data::jsonb #>> '{attributionData,epik}') <> '')
        OR (jsonb_typeof(data::jsonb #> '{attributionData,_epik}') = 'string'
            AND btrim(data::jsonb #>> '{attributionData,_epik}') <> ''), false),
    has_twclid = coalesce(jsonb_typeof(data::jsonb #> '{attributionData,twclid}') = 'string'
        AND btrim(data::jsonb #>> '{attributionData,twclid}') <> '', false)
WHERE data::jsonb #> '{attributionData}' ?| ARRAY['rdt_cid', 'ScCid', 'epik', '_epik', 'twclid'];
CREATE INDEX leads_has_rdt_cid ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_rdt_cid;
CREATE INDEX leads_has_sccid ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_sccid;
CREATE INDEX leads_has_epik ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_epik;
CREATE INDEX leads_has_twclid ON leads (project_id, created_at, id) INCLUDE (status) WHERE has_twclid;

CREATE OR REPLACE FUNCTION lead_facets(l leads) RETURNS TABLE (facet text, value text)
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
        ('has_li_fat_id', l.has_li_fat_id::text),
        ('has_gbraid', l.has_gbraid::text),
        ('has_ttclid', l.has_ttclid::text),
        ('has_rdt_cid', l.has_rdt_cid::text),
        ('has_sccid', l.has_sccid::text),
        ('has_epik', l.has_epik::text),
        ('has_twclid', l.has_twclid::text)
    ) AS f (facet, value) WHERE f.value IS NOT NULL
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
INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
    SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
    FROM leads l CROSS JOIN LATERAL (VALUES
        ('has_rdt_cid', l.has_rdt_cid::text),
        ('has_sccid', l.has_sccid::text),
        ('has_epik', l.has_epik::text),
        ('has_twclid', l.has_twclid::text)
    ) AS f (facet, value)
    GROUP BY 1, 2, 3, 4, 5;
