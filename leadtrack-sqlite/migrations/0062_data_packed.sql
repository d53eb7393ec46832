-- Issue #48: a lead's data is stored packed (`packed.rs`): its JSON compressed with zstd
-- against a fixed dictionary of the contract's keys, about 250 bytes where the JSON takes 575
-- (the load generator's leads), and a third less for the table at a million leads.
--
-- `leads` is STRICT, so `data` cannot hold a BLOB under its TEXT type: the text moves aside,
-- a BLOB column takes its name, every lead is packed into it (`lead_pack`, a SQL function of
-- the store's connections), and the text goes. SQLite drops a column only when nothing in the
-- schema names it, so the report's view, which reads it, and the three triggers that read the
-- view go first and come back as migration 56 made them, the view reading the JSON through
-- `lead_json`.
-- Upgrading a store rewrites each lead twice (the fill, then the drop): minutes at a million.

DROP TRIGGER leads_report_count_before_update;
DROP TRIGGER leads_report_count_after_update;
DROP TRIGGER leads_report_count_delete;
DROP VIEW lead_report_rows;

ALTER TABLE leads RENAME COLUMN data TO data_text;
-- Every insert gives `data`; the default only lets SQLite add a NOT NULL column.
ALTER TABLE leads ADD COLUMN data BLOB NOT NULL DEFAULT x'';
UPDATE leads SET data = lead_pack(data_text);
ALTER TABLE leads DROP COLUMN data_text;

CREATE VIEW lead_report_rows AS
SELECT id, project_id, created_at / 86400000 AS day, touch.column1 AS touch,
    CASE touch.column1 WHEN 'first' THEN coalesce(first_source, '')
        ELSE coalesce(last_source, '') END AS source,
    CASE touch.column1 WHEN 'first' THEN coalesce(first_campaign, '')
        ELSE coalesce(last_campaign, '') END AS campaign,
    CASE WHEN touch.column1 = 'last'
            OR (first_source IS last_source AND first_campaign IS last_campaign)
        THEN coalesce(
            nullif(trim(CAST(lead_json(data) ->> '$.attributionData.utm_id' AS TEXT)), ''),
            'meta:' || nullif(trim(CAST(lead_json(data) ->> '$.attributionData.metaCampaignId' AS TEXT)), ''),
            'google:' || nullif(trim(CAST(lead_json(data) ->> '$.attributionData.googleCampaignId' AS TEXT)), ''),
            '')
        ELSE '' END AS campaign_id,
    coalesce(conversion_id, '') AS conversion_id,
    status,
    CASE WHEN (CASE touch.column1 WHEN 'first' THEN first_source ELSE last_source END) IS NULL
        THEN (has_gclid OR has_gbraid) | (has_fbc << 1) | (has_msclkid << 2)
            | (has_li_fat_id << 3) | (has_ttclid << 4)
        ELSE 0 END AS clicked,
    coalesce(price, 0) AS price
FROM leads JOIN (VALUES ('first'), ('last')) AS touch;

CREATE TRIGGER leads_report_count_before_update BEFORE UPDATE OF status, conversion_id, price,
    created_at, data, first_source, first_campaign, last_source, last_campaign, has_gclid,
    has_gbraid, has_fbc, has_msclkid, has_li_fat_id, has_ttclid ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    INSERT INTO lead_report_counts (project_id, touch, day, source, campaign, campaign_id,
        conversion_id, status, clicked, total, value)
    SELECT project_id, touch, day, source, campaign, campaign_id, conversion_id, status,
        clicked, -1, -price
    FROM lead_report_rows WHERE id = old.id
    ON CONFLICT DO UPDATE SET total = total + excluded.total, value = value + excluded.value;
END;
CREATE TRIGGER leads_report_count_after_update AFTER UPDATE OF status, conversion_id, price,
    created_at, data, first_source, first_campaign, last_source, last_campaign, has_gclid,
    has_gbraid, has_fbc, has_msclkid, has_li_fat_id, has_ttclid ON leads
WHEN new.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    INSERT INTO lead_report_counts (project_id, touch, day, source, campaign, campaign_id,
        conversion_id, status, clicked, total, value)
    SELECT project_id, touch, day, source, campaign, campaign_id, conversion_id, status,
        clicked, 1, price
    FROM lead_report_rows WHERE id = new.id
    ON CONFLICT DO UPDATE SET total = total + excluded.total, value = value + excluded.value;
END;
CREATE TRIGGER leads_report_count_delete BEFORE DELETE ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    INSERT INTO lead_report_counts (project_id, touch, day, source, campaign, campaign_id,
        conversion_id, status, clicked, total, value)
    SELECT project_id, touch, day, source, campaign, campaign_id, conversion_id, status,
        clicked, -1, -price
    FROM lead_report_rows WHERE id = old.id
    ON CONFLICT DO UPDATE SET total = total + excluded.total, value = value + excluded.value;
END;
