-- Each lead's first touch (the first comment, rating or status change by a person): when, and
-- by whom, for the reports; from the history already recorded.

ALTER TABLE leads ADD COLUMN first_touch_at INTEGER;
ALTER TABLE leads ADD COLUMN first_touch_by TEXT;
CREATE TEMP TABLE touches AS
    SELECT e.lead_id, e.at, json_extract(e.actor, '$.name') AS name
    FROM lead_events e
    WHERE json_extract(e.actor, '$.kind') = 'user'
      AND json_extract(e.activity, '$.type')
          IN ('rated', 'reopened', 'commented', 'spam', 'not_spam')
      AND NOT EXISTS (
          SELECT 1 FROM lead_events o
          WHERE o.lead_id = e.lead_id AND (o.at < e.at OR (o.at = e.at AND o.id < e.id))
            AND json_extract(o.actor, '$.kind') = 'user'
            AND json_extract(o.activity, '$.type')
                IN ('rated', 'reopened', 'commented', 'spam', 'not_spam'));
UPDATE leads SET first_touch_at = t.at, first_touch_by = t.name
    FROM touches t WHERE t.lead_id = leads.id;
DROP TABLE touches;
-- The reports read the touched leads of a range alone.
CREATE INDEX leads_touched ON leads (project_id, created_at) WHERE first_touch_at IS NOT NULL;
