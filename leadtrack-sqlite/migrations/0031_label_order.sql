-- Labels in an order the owners set (the number keys follow it; until now, the order they were
-- created in), and archived labels.

ALTER TABLE labels ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
ALTER TABLE labels ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
UPDATE labels SET position = (
    SELECT count(*) FROM labels o WHERE o.project_id = labels.project_id
        AND (o.created_at < labels.created_at
             OR (o.created_at = labels.created_at AND o.id < labels.id)));
CREATE INDEX labels_order ON labels (project_id, position);
