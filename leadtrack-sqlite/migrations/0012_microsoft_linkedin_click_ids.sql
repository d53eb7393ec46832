-- The click ids of Microsoft Advertising (`msclkid`) and LinkedIn (`li_fat_id`), for getLeads'
-- `[exists]` filters, as `has_gclid` and the others: a non-blank string in `attributionData`.

ALTER TABLE leads ADD COLUMN has_msclkid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leads ADD COLUMN has_li_fat_id INTEGER NOT NULL DEFAULT 0;
UPDATE leads SET
    has_msclkid = coalesce(
        trim(json_extract(data, '$.attributionData.msclkid')) <> ''
            AND json_type(data, '$.attributionData.msclkid') = 'text', 0),
    has_li_fat_id = coalesce(
        trim(json_extract(data, '$.attributionData.li_fat_id')) <> ''
            AND json_type(data, '$.attributionData.li_fat_id') = 'text', 0)
WHERE json_extract(data, '$.attributionData.msclkid') IS NOT NULL
   OR json_extract(data, '$.attributionData.li_fat_id') IS NOT NULL;
