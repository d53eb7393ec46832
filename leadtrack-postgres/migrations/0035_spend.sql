-- Ad spend (issue #52): what each campaign cost per day, one row per project, day, source,
-- medium, account and campaign (its id, else its folded name: core's `SpendRow::key`), so
-- that reading a day again replaces it; and the currency rates the project's owner sets.
-- The day is its ISO text (`2026-03-01`), which sorts as the days do.
CREATE TABLE spend (
    project_id   bigint  NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day          text    NOT NULL,
    source       text    NOT NULL,
    medium       text    NOT NULL,
    account      text    NOT NULL,
    campaign_key text    NOT NULL,
    campaign_id  text,
    campaign     text    NOT NULL,
    currency     text    NOT NULL,
    cost_micros  bigint  NOT NULL,
    clicks       bigint,
    impressions  bigint,
    PRIMARY KEY (project_id, day, source, medium, account, campaign_key)
);

CREATE TABLE fx_rates (
    project_id bigint           NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    currency   text             NOT NULL,
    rate       double precision NOT NULL,
    PRIMARY KEY (project_id, currency)
);
