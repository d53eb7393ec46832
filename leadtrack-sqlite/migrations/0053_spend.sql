-- Ad spend (issue #52): what each campaign cost per day, one row per project, day, source,
-- medium, account and campaign (its id, else its folded name: core's `SpendRow::key`), so
-- that reading a day again replaces it; and the currency rates the project's owner sets.
CREATE TABLE spend (
    project_id   INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day          TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    medium       TEXT    NOT NULL,
    account      TEXT    NOT NULL,
    campaign_key TEXT    NOT NULL,
    campaign_id  TEXT,
    campaign     TEXT    NOT NULL,
    currency     TEXT    NOT NULL,
    cost_micros  INTEGER NOT NULL,
    clicks       INTEGER,
    impressions  INTEGER,
    PRIMARY KEY (project_id, day, source, medium, account, campaign_key)
) WITHOUT ROWID;

CREATE TABLE fx_rates (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    currency   TEXT    NOT NULL,
    rate       REAL    NOT NULL,
    PRIMARY KEY (project_id, currency)
) WITHOUT ROWID;
