-- Issue #48: every lead's history began with a `created` row, by nobody at the lead's
-- creation time, which the lead itself tells: 56 MiB of rows and index at a million leads.
-- A history now tells it from the lead (core's `activity::history`), and these rows go.
--
-- Leads whose history is their rows alone are listed, so that they gain nothing: those
-- captured before histories existed (migration 4), and any whose first event is not such a
-- row. A removed row was its lead's first event, so a history tells its events in the same
-- order as before.
CREATE TABLE lead_histories_recorded (
    lead_id    INTEGER PRIMARY KEY REFERENCES leads (id),
    project_id INTEGER NOT NULL REFERENCES projects (id)
) STRICT;

INSERT INTO lead_histories_recorded (lead_id, project_id)
SELECT l.id, l.project_id FROM leads l WHERE NOT EXISTS (
    SELECT 1 FROM lead_events e
    WHERE e.id = (SELECT min(id) FROM lead_events WHERE lead_id = l.id)
      AND e.at = l.created_at AND e.actor IS NULL AND e.activity = '{"type":"created"}'
);

DELETE FROM lead_events WHERE id IN (
    SELECT (SELECT min(id) FROM lead_events WHERE lead_id = l.id) FROM leads l
    WHERE l.id NOT IN (SELECT lead_id FROM lead_histories_recorded)
);
