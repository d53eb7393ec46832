-- REST hooks (core's webhook::NewWebhook::rest_hook): webhooks an automation tool
-- subscribed through `POST /api/hooks`, counted apart from the dashboard's and removed
-- when their target answers 410 Gone.
ALTER TABLE webhooks ADD COLUMN rest_hook boolean NOT NULL DEFAULT false;
