-- Secrets sealed at rest: the check value of the key they are sealed with (see `secrets`,
-- which seals what older builds kept plain right after).

CREATE TABLE secret_key_check (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value TEXT    NOT NULL
) STRICT;
