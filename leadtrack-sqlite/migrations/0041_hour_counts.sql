-- The count of each project's leads per hour of creation (`created_at / 3600000`) and status,
-- kept by triggers, so that a listing filtered by a range of dates (a date preset: a month is
-- 80,000 leads at a million) counts its total and tabs from a few hundred rows, and counts
-- lead by lead only the partial hours at its ends.

CREATE TABLE lead_hour_counts (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    hour       INTEGER NOT NULL,
    status     TEXT    NOT NULL,
    total      INTEGER NOT NULL,
    PRIMARY KEY (project_id, hour, status)
) STRICT, WITHOUT ROWID;
INSERT INTO lead_hour_counts (project_id, hour, status, total)
    SELECT project_id, created_at / 3600000, status, count(*) FROM leads
    GROUP BY project_id, created_at / 3600000, status;
CREATE TRIGGER leads_hour_count_insert AFTER INSERT ON leads BEGIN
    INSERT INTO lead_hour_counts (project_id, hour, status, total)
        VALUES (new.project_id, new.created_at / 3600000, new.status, 1)
        ON CONFLICT (project_id, hour, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_hour_count_update AFTER UPDATE OF status, created_at ON leads
WHEN (old.status, old.created_at / 3600000) IS NOT (new.status, new.created_at / 3600000)
BEGIN
    UPDATE lead_hour_counts SET total = total - 1 WHERE project_id = old.project_id
        AND hour = old.created_at / 3600000 AND status = old.status;
    INSERT INTO lead_hour_counts (project_id, hour, status, total)
        VALUES (new.project_id, new.created_at / 3600000, new.status, 1)
        ON CONFLICT (project_id, hour, status) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER leads_hour_count_delete AFTER DELETE ON leads BEGIN
    UPDATE lead_hour_counts SET total = total - 1 WHERE project_id = old.project_id
        AND hour = old.created_at / 3600000 AND status = old.status;
END;
