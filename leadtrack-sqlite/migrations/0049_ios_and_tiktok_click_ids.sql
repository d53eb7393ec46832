-- Google's click ids of iOS campaigns (`gbraid`, `wbraid`: either) and TikTok's (`ttclid`)
-- get flags like the other click ids (issue #50): each a partial index by creation time and
-- kept counts, for getLeads' `gbraid[exists]` and `ttclid[exists]` and the inbox's filters.
-- The facets' triggers are made again with the two new flags, and the kept counts counted
-- again from the leads. The placeholders are written out by `build.rs`:
-- facets: form_name form_key first_source first_medium first_campaign conversion_id
-- flags: has_gclid has_cid has_fbp has_fbc has_msclkid has_li_fat_id has_gbraid has_ttclid

ALTER TABLE leads ADD COLUMN has_gbraid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leads ADD COLUMN has_ttclid INTEGER NOT NULL DEFAULT 0;
UPDATE leads SET
    has_gbraid = coalesce(
        (json_type(data, '$.attributionData.gbraid') = 'text'
            AND trim(json_extract(data, '$.attributionData.gbraid')) <> '')
        OR (json_type(data, '$.attributionData.wbraid') = 'text'
            AND trim(json_extract(data, '$.attributionData.wbraid')) <> ''), 0),
    has_ttclid = coalesce(json_type(data, '$.attributionData.ttclid') = 'text'
        AND trim(json_extract(data, '$.attributionData.ttclid')) <> '', 0)
WHERE json_type(data, '$.attributionData.gbraid') IS NOT NULL
   OR json_type(data, '$.attributionData.wbraid') IS NOT NULL
   OR json_type(data, '$.attributionData.ttclid') IS NOT NULL;
CREATE INDEX leads_has_gbraid ON leads (project_id, created_at, id, status) WHERE has_gbraid = 1;
CREATE INDEX leads_has_ttclid ON leads (project_id, created_at, id, status) WHERE has_ttclid = 1;

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
