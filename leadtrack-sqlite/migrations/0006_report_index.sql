-- What a report reads, and nothing else: the project's leads in a range of creation times with
-- every column it counts, so it never visits the table (built after the backfill of 5, which
-- then need not keep it up to date row by row).

CREATE INDEX leads_report ON leads (
    project_id, created_at,
    first_source, first_medium, first_campaign, last_source, last_medium, last_campaign,
    status, conversion_id, price
);
