-- Issue #48: every lead's history began with a `created` row, by nobody at the lead's
-- creation time, which the lead itself tells. A history now tells it from the lead (core's
-- `activity::history`), and these rows go.
--
-- Leads whose history is their rows alone are listed, so that they gain nothing: any whose
-- first event is not such a row. A removed row was its lead's first event, so a history
-- tells its events in the same order as before.
CREATE TABLE lead_histories_recorded (
    project_id bigint NOT NULL REFERENCES projects (id),
    lead_id    bigint NOT NULL,
    PRIMARY KEY (project_id, lead_id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);

CREATE TEMPORARY TABLE first_events ON COMMIT DROP AS
SELECT project_id, lead_id, min(id) AS id FROM lead_events GROUP BY project_id, lead_id;

INSERT INTO lead_histories_recorded (project_id, lead_id)
SELECT l.project_id, l.id FROM leads l WHERE NOT EXISTS (
    SELECT 1 FROM first_events f
    JOIN lead_events e ON e.project_id = f.project_id AND e.id = f.id
    WHERE f.project_id = l.project_id AND f.lead_id = l.id
      AND e.at = l.created_at AND e.actor IS NULL AND e.activity = '{"type":"created"}'
);

DELETE FROM lead_events e USING first_events f
WHERE e.project_id = f.project_id AND e.id = f.id AND NOT EXISTS (
    SELECT 1 FROM lead_histories_recorded r
    WHERE r.project_id = f.project_id AND r.lead_id = f.lead_id
);
