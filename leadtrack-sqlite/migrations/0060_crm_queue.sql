-- A CRM sync's events (`crm` = 1) go to one worker at a time, claimed together (core's
-- JobQueue::claim_sync_events), so a person's events reach the CRM in order and each
-- finds what the one before made; the other webhooks' events are claimed one by one as
-- before. The queue's indexes lead with the flag, so neither kind of claim reads past the
-- other's backlog.
ALTER TABLE webhook_events ADD COLUMN crm INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_events SET crm = 1
WHERE webhook_id IN (SELECT id FROM webhooks WHERE kind IN ('hubspot', 'pipedrive'));
DROP INDEX webhook_events_due;
DROP INDEX webhook_events_leased;
CREATE INDEX webhook_events_due    ON webhook_events (crm, due_at, id) WHERE state = 'queued';
CREATE INDEX webhook_events_leased ON webhook_events (crm, lease_expires_at, id)
    WHERE state = 'running';
