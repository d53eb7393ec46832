-- What each webhook is (core's webhook::WebhookKind): `webhook` (the dashboard's),
-- `rest_hook` (subscribed by an automation tool through `POST /api/hooks`, counted apart
-- and removed when its target answers 410 Gone), `hubspot` or `pipedrive` (CRM syncs,
-- whose deal pipeline and stages are their `options`, as JSON).
ALTER TABLE webhooks ADD COLUMN kind TEXT NOT NULL DEFAULT 'webhook';
ALTER TABLE webhooks ADD COLUMN options TEXT;

-- What a CRM sync's CRM calls each lead (core's crm::CrmRecord): its contact, its lead
-- record (Pipedrive's) and its deal, so that a re-rating moves the same deal.
CREATE TABLE crm_records (
    webhook_id TEXT NOT NULL,
    lead_id INTEGER NOT NULL,
    contact_id TEXT,
    crm_lead_id TEXT,
    deal_id TEXT,
    PRIMARY KEY (webhook_id, lead_id)
);
