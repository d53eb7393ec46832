-- The leads out of creation order. A lead's id is above every earlier one's, and leads mostly
-- arrive as they are created, so the project's other leads are in creation order by id too: a
-- page of a search newest (or oldest) first is then the first matches its index finds by id,
-- with these checked besides (`listing.rs`). A lead is kept here when a lead with a lower id
-- was created after it (an import of older leads, say) or when its creation time changes.

CREATE TABLE lead_order_breaks (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    lead_id    INTEGER NOT NULL,
    PRIMARY KEY (project_id, lead_id)
) STRICT, WITHOUT ROWID;
INSERT INTO lead_order_breaks (project_id, lead_id)
    SELECT project_id, id FROM (
        SELECT project_id, id, created_at, max(created_at) OVER (
            PARTITION BY project_id ORDER BY id
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS latest_before FROM leads
    ) WHERE created_at < latest_before;
CREATE TRIGGER leads_order_insert AFTER INSERT ON leads
WHEN new.created_at < (SELECT max(created_at) FROM leads WHERE project_id = new.project_id)
BEGIN
    INSERT OR IGNORE INTO lead_order_breaks (project_id, lead_id)
        VALUES (new.project_id, new.id);
END;
CREATE TRIGGER leads_order_update AFTER UPDATE OF created_at, project_id ON leads
WHEN (old.created_at, old.project_id) IS NOT (new.created_at, new.project_id)
BEGIN
    DELETE FROM lead_order_breaks WHERE project_id = old.project_id AND lead_id = old.id;
    INSERT OR IGNORE INTO lead_order_breaks (project_id, lead_id)
        VALUES (new.project_id, new.id);
END;
CREATE TRIGGER leads_order_delete AFTER DELETE ON leads BEGIN
    DELETE FROM lead_order_breaks WHERE project_id = old.project_id AND lead_id = old.id;
END;
