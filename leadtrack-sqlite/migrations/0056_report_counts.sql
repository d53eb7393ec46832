-- Issue #52: what the report of spend against leads counts, kept per day, so that a year
-- of a million leads is read from a few thousand rows instead of the leads themselves.
--
-- `lead_report_rows` states once what the report tells leads apart by: each lead twice,
-- once per touch ('first', 'last'), with the touch's source and campaign ('' for none), the
-- ad campaign id the lead carries (core's `spend::CAMPAIGN_ID_FIELDS`: `utm_id`, else
-- `meta:` and Meta's lead form's campaign id, else `google:` and Google's; the last touch's,
-- and the first's when it is the last's source and campaign), its conversion id ('' for
-- none), status, its click ids as bits when the touch names no source (core's
-- `ClickIds::from_bits`), and its price.
--
-- `lead_report_counts` keeps them counted per day, as the other kept counts are
-- (migration 51): the writer adds the new leads after their commit, in the batches that keep
-- the words' index, up to its mark; a reader adds the few above it from the view; a change
-- or deletion of a counted lead moves it by trigger (its rows before, subtracted; after,
-- added).

CREATE VIEW lead_report_rows AS
SELECT id, project_id, created_at / 86400000 AS day, touch.column1 AS touch,
    CASE touch.column1 WHEN 'first' THEN coalesce(first_source, '')
        ELSE coalesce(last_source, '') END AS source,
    CASE touch.column1 WHEN 'first' THEN coalesce(first_campaign, '')
        ELSE coalesce(last_campaign, '') END AS campaign,
    CASE WHEN touch.column1 = 'last'
            OR (first_source IS last_source AND first_campaign IS last_campaign)
        THEN coalesce(
            nullif(trim(CAST(data ->> '$.attributionData.utm_id' AS TEXT)), ''),
            'meta:' || nullif(trim(CAST(data ->> '$.attributionData.metaCampaignId' AS TEXT)), ''),
            'google:' || nullif(trim(CAST(data ->> '$.attributionData.googleCampaignId' AS TEXT)), ''),
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

CREATE TABLE lead_report_counts (
    project_id    INTEGER NOT NULL,
    touch         TEXT    NOT NULL,
    day           INTEGER NOT NULL,
    source        TEXT    NOT NULL,
    campaign      TEXT    NOT NULL,
    campaign_id   TEXT    NOT NULL,
    conversion_id TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    clicked       INTEGER NOT NULL,
    total         INTEGER NOT NULL,
    value         INTEGER NOT NULL,
    PRIMARY KEY (project_id, touch, day, source, campaign, campaign_id, conversion_id, status,
        clicked)
) WITHOUT ROWID;

INSERT INTO lead_report_counts (project_id, touch, day, source, campaign, campaign_id,
    conversion_id, status, clicked, total, value)
SELECT project_id, touch, day, source, campaign, campaign_id, conversion_id, status, clicked,
    count(*), sum(price)
FROM lead_report_rows WHERE id <= (SELECT indexed_to FROM lead_words_state)
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;

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
