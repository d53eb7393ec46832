-- A project's default consent for leads that give none (a JSON object of `adUserData` and
-- `adPersonalization`; empty: unknown).

ALTER TABLE projects ADD COLUMN default_consent TEXT NOT NULL DEFAULT '{}';
