-- Labels in an order the owners set (the number keys follow it; until now, the order they were
-- created in), and archived labels.

ALTER TABLE labels ADD COLUMN archived boolean NOT NULL DEFAULT false;
ALTER TABLE labels ADD COLUMN position bigint NOT NULL DEFAULT 0;
UPDATE labels SET position = ordered.position
FROM (
    SELECT project_id, id,
           row_number() OVER (PARTITION BY project_id ORDER BY created_at, id) - 1 AS position
    FROM labels
) AS ordered
WHERE labels.project_id = ordered.project_id AND labels.id = ordered.id;
CREATE INDEX labels_order ON labels (project_id, position);
