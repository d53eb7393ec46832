-- Each lead's next step (issue #50): when someone acts on it next, and a short note. Beside
-- the leads, so that storing a lead does no more work for it. `reminded` is set when the
-- alert worker takes the step's reminder, and cleared when the step is set again.
CREATE TABLE next_steps (
    lead_id    INTEGER PRIMARY KEY REFERENCES leads (id),
    project_id INTEGER NOT NULL REFERENCES projects (id),
    due_at     INTEGER NOT NULL,
    note       TEXT    NOT NULL,
    set_by     INTEGER,
    set_at     INTEGER NOT NULL,
    reminded   INTEGER NOT NULL DEFAULT 0
) STRICT;
-- The Due list: a project's steps, soonest first.
CREATE INDEX next_steps_due ON next_steps (project_id, due_at);
-- The reminders still to send: only those few.
CREATE INDEX next_steps_unreminded ON next_steps (due_at) WHERE reminded = 0;
