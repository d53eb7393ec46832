-- The count of each project's leads per status, kept by triggers, so that a listing filtered
-- only by status (an inbox tab) counts its total without a scan.

CREATE TABLE lead_status_counts (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    status     TEXT    NOT NULL,
    total      INTEGER NOT NULL,
    PRIMARY KEY (project_id, status)
) STRICT, WITHOUT ROWID;
INSERT INTO lead_status_counts (project_id, status, total)
    SELECT project_id, status, count(*) FROM leads GROUP BY project_id, status;
CREATE TRIGGER leads_status_count_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_status_counts (project_id, status, total)
        VALUES (new.project_id, new.status, 1)
        ON CONFLICT (project_id, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_status_count_update AFTER UPDATE OF status ON leads
WHEN old.status IS NOT new.status BEGIN
    UPDATE lead_status_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status;
    INSERT INTO lead_status_counts (project_id, status, total)
        VALUES (new.project_id, new.status, 1)
        ON CONFLICT (project_id, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_status_count_delete AFTER DELETE ON leads BEGIN
    UPDATE lead_status_counts SET total = total - 1
        WHERE project_id = old.project_id AND status = old.status;
END;
