-- The filters of every source (the form exact or in any case, first touch, rating, click ids),
-- each read along an index by creation time, and counted from kept counts: per project, facet
-- (the filtered column, as core's `LeadQuery::facets` names it), value and status, how many
-- leads have it. Triggers keep them; a click id's value is its flag as text. The
-- placeholders below stand for the list of these facets, written out by `build.rs`:
-- facets: form_name form_key first_source first_medium first_campaign conversion_id
-- flags: has_gclid has_cid has_fbp has_fbc has_msclkid has_li_fat_id

CREATE INDEX leads_form_key       ON leads (project_id, form_key, created_at, id, status);
CREATE INDEX leads_first_source   ON leads (project_id, first_source, created_at, id, status);
CREATE INDEX leads_first_medium   ON leads (project_id, first_medium, created_at, id, status);
CREATE INDEX leads_first_campaign ON leads (project_id, first_campaign, created_at, id, status);
CREATE INDEX leads_conversion     ON leads (project_id, conversion_id, created_at, id, status);
CREATE INDEX leads_has_gclid      ON leads (project_id, created_at, id, status) WHERE has_gclid = 1;
CREATE INDEX leads_has_cid        ON leads (project_id, created_at, id, status) WHERE has_cid = 1;
CREATE INDEX leads_has_fbp        ON leads (project_id, created_at, id, status) WHERE has_fbp = 1;
CREATE INDEX leads_has_fbc        ON leads (project_id, created_at, id, status) WHERE has_fbc = 1;
CREATE INDEX leads_has_msclkid    ON leads (project_id, created_at, id, status) WHERE has_msclkid = 1;
CREATE INDEX leads_has_li_fat_id  ON leads (project_id, created_at, id, status) WHERE has_li_fat_id = 1;

CREATE TABLE lead_facet_counts (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    facet      TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    total      INTEGER NOT NULL,
    PRIMARY KEY (project_id, facet, value, status)
) STRICT, WITHOUT ROWID;
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
