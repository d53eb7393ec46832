-- Issue #48: the kept counts (per status, per hour, per facet) are written after the
-- commit, by the writer, in the batches that keep the words' index (`words::catch_up`),
-- not by a trigger per lead: the 18 upserts of a lead's facets were a fifth of its
-- insert's time. They hold the leads up to the words' mark, `lead_words_state.indexed_to`;
-- a reader adds the few above it (`counts.rs`). Only a change or a deletion of a lead
-- already counted adjusts them by trigger, as for the words. They are counted again up to
-- the mark, since the leads above it were counted by the old triggers. The placeholders are
-- written out by `build.rs`, whose last lists are the ones the writer counts by:
-- facets: form_name form_key first_source first_medium first_campaign conversion_id
-- flags: has_gclid has_cid has_fbp has_fbc has_msclkid has_li_fat_id has_gbraid has_ttclid has_rdt_cid has_sccid has_epik has_twclid

DROP TRIGGER leads_status_count_insert;
DROP TRIGGER leads_status_count_update;
DROP TRIGGER leads_status_count_delete;
DROP TRIGGER leads_hour_count_insert;
DROP TRIGGER leads_hour_count_update;
DROP TRIGGER leads_hour_count_delete;
DROP TRIGGER leads_facets_insert;
DROP TRIGGER leads_facets_update;
DROP TRIGGER leads_facets_delete;

DELETE FROM lead_status_counts;
INSERT INTO lead_status_counts (project_id, status, total)
    SELECT project_id, status, count(*) FROM leads
    WHERE id <= (SELECT indexed_to FROM lead_words_state) GROUP BY project_id, status;
DELETE FROM lead_hour_counts;
INSERT INTO lead_hour_counts (project_id, hour, status, total)
    SELECT project_id, created_at / 3600000, status, count(*) FROM leads
    WHERE id <= (SELECT indexed_to FROM lead_words_state) GROUP BY 1, 2, 3;
DELETE FROM lead_facet_counts;
INSERT INTO lead_facet_counts (project_id, facet, value, status, total)
    SELECT project_id, facet, value, status, count(*) FROM (
    {{facet_rows leads WHERE id <= (SELECT indexed_to FROM lead_words_state)}}
    ) WHERE value IS NOT NULL GROUP BY project_id, facet, value, status;

CREATE TRIGGER leads_status_count_update AFTER UPDATE OF status ON leads
WHEN old.status IS NOT new.status AND old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    UPDATE lead_status_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status;
    INSERT INTO lead_status_counts (project_id, status, total)
        VALUES (new.project_id, new.status, 1)
        ON CONFLICT (project_id, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_status_count_delete AFTER DELETE ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    UPDATE lead_status_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status;
END;

CREATE TRIGGER leads_hour_count_update AFTER UPDATE OF status, created_at ON leads
WHEN (old.status, old.created_at / 3600000) IS NOT (new.status, new.created_at / 3600000)
    AND old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    UPDATE lead_hour_counts SET total = total - 1 WHERE project_id = old.project_id
        AND hour = old.created_at / 3600000 AND status = old.status;
    INSERT INTO lead_hour_counts (project_id, hour, status, total)
        VALUES (new.project_id, new.created_at / 3600000, new.status, 1)
        ON CONFLICT (project_id, hour, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_hour_count_delete AFTER DELETE ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    UPDATE lead_hour_counts SET total = total - 1 WHERE project_id = old.project_id
        AND hour = old.created_at / 3600000 AND status = old.status;
END;

CREATE TRIGGER leads_facets_update AFTER UPDATE OF {{facet_columns}} ON leads
WHEN ({{facet_columns old}}) IS NOT ({{facet_columns new}})
    AND old.id <= (SELECT indexed_to FROM lead_words_state)
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
CREATE TRIGGER leads_facets_delete AFTER DELETE ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    UPDATE lead_facet_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status AND (facet, value) IN (
        {{facet_values old}});
END;
