-- The click ids the capture script keeps since #51 get flags like the others (issue #50:
-- every click id it keeps has its filter): Reddit's `rdt_cid`, Snapchat's `ScCid`,
-- Pinterest's `epik` (or its tag's cookie `_epik`, which keeps it) and X's `twclid`; each a
-- partial index by creation time and kept counts, for getLeads' `[exists]` filters and the
-- inbox's. The facets' triggers are made again with the new flags, and the kept counts
-- counted again from the leads. The placeholders are written out by `build.rs`:
-- facets: form_name form_key first_source first_medium first_campaign conversion_id
-- flags: has_gclid has_cid has_fbp has_fbc has_msclkid has_li_fat_id has_gbraid has_ttclid has_rdt_cid has_sccid has_epik has_twclid

ALTER TABLE leads ADD COLUMN has_rdt_cid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leads ADD COLUMN has_sccid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leads ADD COLUMN has_epik INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leads ADD COLUMN has_twclid INTEGER NOT NULL DEFAULT 0;
UPDATE leads SET
    has_rdt_cid = coalesce(json_type(data, '$.attributionData.rdt_cid') = 'text'
        AND trim(json_extract(data, '$.attributionData.rdt_cid')) <> '', 0),
    has_sccid = coalesce(json_type(data, '$.attributionData.ScCid') = 'text'
        AND trim(json_extract(data, '$.attributionData.ScCid')) <> '', 0),
    has_epik = coalesce(
        (json_type(data, '$.attributionData.epik') = 'text'
            AND trim(json_extract(data, '$.attributionData.epik')) <> '')
        OR (json_type(data, '$.attributionData._epik') = 'text'
            AND trim(json_extract(data, '$.attributionData._epik')) <> ''), 0),
    has_twclid = coalesce(json_type(data, '$.attributionData.twclid') = 'text'
        AND trim(json_extract(data, '$.attributionData.twclid')) <> '', 0)
WHERE json_type(data, '$.attributionData.rdt_cid') IS NOT NULL
   OR json_type(data, '$.attributionData.ScCid') IS NOT NULL
   OR json_type(data, '$.attributionData.epik') IS NOT NULL
   OR json_type(data, '$.attributionData._epik') IS NOT NULL
   OR json_type(data, '$.attributionData.twclid') IS NOT NULL;
CREATE INDEX leads_has_rdt_cid ON leads (project_id, created_at, id, status) WHERE has_rdt_cid = 1;
CREATE INDEX leads_has_sccid ON leads (project_id, created_at, id, status) WHERE has_sccid = 1;
CREATE INDEX leads_has_epik ON leads (project_id, created_at, id, status) WHERE has_epik = 1;
CREATE INDEX leads_has_twclid ON leads (project_id, created_at, id, status) WHERE has_twclid = 1;

DROP TRIGGER leads_facets_insert;
DROP TRIGGER leads_facets_update;
DROP TRIGGER leads_facets_delete;
DELETE FROM lead_facet_counts;
INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
    SELECT project_id, facet, value, status, count(*) FROM (
    {{facet_rows leads}}
    ) WHERE value IS NOT NULL GROUP BY project_id, facet, value, status;
CREATE TRIGGER leads_facets_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
        SELECT new.project_id, facet, value, new.status, 1 FROM (
        {{facet_values new}})
        WHERE value IS NOT NULL
        ON CONFLICT (project_id, facet, value, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_facets_update AFTER UPDATE OF {{facet_columns}} ON leads
WHEN ({{facet_columns old}}) IS NOT ({{facet_columns new}})
BEGIN
    UPDATE lead_facet_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status AND (facet, value) IN (
        {{facet_values old}});
    INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
        SELECT new.project_id, facet, value, new.status, 1 FROM (
        {{facet_values new}})
        WHERE value IS NOT NULL
        ON CONFLICT (project_id, facet, value, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_facets_delete AFTER DELETE ON leads BEGIN
    UPDATE lead_facet_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status AND (facet, value) IN (
        {{facet_values old}});
END;
