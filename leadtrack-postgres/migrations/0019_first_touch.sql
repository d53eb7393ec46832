-- Each lead's first touch (the first comment, rating or status change by a person): when, and
-- by whom, for the reports; from the history already recorded.

ALTER TABLE leads ADD COLUMN first_touch_at bigint;
ALTER TABLE leads ADD COLUMN first_touch_by text;
UPDATE leads SET first_touch_at = t.at, first_touch_by = t.name
FROM (
    SELECT DISTINCT ON (project_id, lead_id) project_id, lead_id, at,
           actor::jsonb ->> 'name' AS name
    FROM lead_events
    WHERE actor::jsonb ->> 'kind' = 'user'
      AND activity::jsonb ->> 'type' IN ('rated', 'reopened', 'commented', 'spam', 'not_spam')
    ORDER BY project_id, lead_id, at, id
) AS t
WHERE leads.project_id = t.project_id AND leads.id = t.lead_id;
-- The reports read the touched leads of a range alone.
CREATE INDEX leads_touched ON leads (project_id, created_at) WHERE first_touch_at IS NOT NULL;
