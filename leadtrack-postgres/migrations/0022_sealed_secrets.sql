-- Secrets sealed at rest: the check value of the key they are sealed with (see `secrets`,
-- which seals what older builds kept plain right after).

CREATE TABLE secret_key_check (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    value text    NOT NULL
);
