-- How long a project keeps its leads (core's project::Retention): leads older than
-- `retention_days` are erased, spam older than `spam_retention_days` deleted, once a day;
-- where the last run left off, when it ran and how many leads it took.
ALTER TABLE projects ADD COLUMN retention_days integer;
ALTER TABLE projects ADD COLUMN spam_retention_days integer NOT NULL DEFAULT 30;
ALTER TABLE projects ADD COLUMN retention_done_to bigint;
ALTER TABLE projects ADD COLUMN retention_ran_at bigint;
ALTER TABLE projects ADD COLUMN retention_erased bigint NOT NULL DEFAULT 0;
