-- Each lead's next step (issue #50): when someone acts on it next, and a short note. Beside
-- the leads, so that storing a lead does no more work for it. `reminded` is set when the
-- alert worker takes the step's reminder, and cleared when the step is set again.
CREATE TABLE next_steps (
    project_id bigint  NOT NULL REFERENCES projects (id),
    lead_id    bigint  NOT NULL,
    due_at     bigint  NOT NULL,
    note       text    NOT NULL,
    set_by     bigint,
    set_at     bigint  NOT NULL,
    reminded   boolean NOT NULL DEFAULT false,
    PRIMARY KEY (lead_id),
    FOREIGN KEY (project_id, lead_id) REFERENCES leads (project_id, id)
);
-- The Due list: a project's steps, soonest first.
CREATE INDEX next_steps_due ON next_steps (project_id, due_at);
-- The reminders still to send: only those few.
CREATE INDEX next_steps_unreminded ON next_steps (due_at) WHERE NOT reminded;
