-- The newest delivery attempt per project and integration, for the settings page. A trigger
-- keeps it as attempts are recorded, so reading it never scans a project's jobs; the newest is
-- the latest `at`, ties going to the attempt recorded last.

CREATE TABLE last_attempts (
    project_id  INTEGER NOT NULL REFERENCES projects (id),
    integration TEXT    NOT NULL,
    attempt_id  INTEGER NOT NULL REFERENCES attempts (id),
    at          INTEGER NOT NULL,
    PRIMARY KEY (project_id, integration)
) STRICT, WITHOUT ROWID;
INSERT INTO last_attempts (project_id, integration, attempt_id, at)
    SELECT j.project_id, a.integration, a.id, a.at
    FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE true
    ON CONFLICT (project_id, integration) DO UPDATE
        SET attempt_id = excluded.attempt_id, at = excluded.at
        WHERE (excluded.at, excluded.attempt_id) > (last_attempts.at, last_attempts.attempt_id);
CREATE TRIGGER attempts_last AFTER INSERT ON attempts BEGIN
    INSERT INTO last_attempts (project_id, integration, attempt_id, at)
        SELECT project_id, new.integration, new.id, new.at FROM jobs WHERE id = new.job_id
        ON CONFLICT (project_id, integration) DO UPDATE
            SET attempt_id = excluded.attempt_id, at = excluded.at
            WHERE (excluded.at, excluded.attempt_id)
                > (last_attempts.at, last_attempts.attempt_id);
END;
