-- Who each lead is assigned to, and each project's round-robin rule with the member its last
-- lead went to.

ALTER TABLE leads ADD COLUMN assigned_to INTEGER REFERENCES users (id);
-- "Mine": a member's leads by status, read without the unassigned ones.
CREATE INDEX leads_assigned ON leads (project_id, assigned_to, status)
    WHERE assigned_to IS NOT NULL;
CREATE TABLE round_robin (
    project_id INTEGER PRIMARY KEY REFERENCES projects (id),
    rule       TEXT    NOT NULL,
    last_user  INTEGER
) STRICT;
