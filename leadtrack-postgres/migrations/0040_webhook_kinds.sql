-- What each webhook is (core's webhook::WebhookKind): `webhook` (the dashboard's),
-- `rest_hook` (subscribed by an automation tool through `POST /api/hooks`, counted apart
-- and removed when its target answers 410 Gone), `hubspot` or `pipedrive` (CRM syncs,
-- whose deal pipeline and stages are their `options`, as JSON).
ALTER TABLE webhooks ADD COLUMN kind text NOT NULL DEFAULT 'webhook';
ALTER TABLE webhooks ADD COLUMN options text;

-- What a CRM sync's CRM calls each lead (core's crm::CrmRecord): its contact, its lead
-- record (Pipedrive's) and its deal, so that a re-rating moves the same deal.
CREATE TABLE crm_records (
    webhook_id uuid NOT NULL,
    lead_id bigint NOT NULL,
    contact_id text,
    crm_lead_id text,
    deal_id text,
    PRIMARY KEY (webhook_id, lead_id)
);
