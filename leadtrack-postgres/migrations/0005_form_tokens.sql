-- A job of a form remembers the form's one-time token (at most one job per lead and token) and
-- the lead's rating before it, which an undo restores.

ALTER TABLE jobs ADD COLUMN form_token uuid;
ALTER TABLE jobs ADD COLUMN prior text;
CREATE UNIQUE INDEX jobs_form ON jobs (project_id, lead_id, form_token)
    WHERE form_token IS NOT NULL;
