-- The `q` search's short words: each lead's strings of one and two characters, in an index of
-- their own (see the `grams` module, which writes it and fills it for the leads stored before
-- it). Only which leads hold a token is kept (`detail = none`).

CREATE VIRTUAL TABLE leads_q_grams USING fts5 (
    grams, content = '', contentless_delete = 1, detail = none, tokenize = 'ascii'
);
CREATE TRIGGER leads_q_grams_delete AFTER DELETE ON leads BEGIN
    DELETE FROM leads_q_grams WHERE rowid = old.project_id << 36 | old.id;
END;
INSERT INTO leads_q_grams (leads_q_grams, rank) VALUES ('automerge', 16);
INSERT INTO leads_q_grams (leads_q_grams, rank) VALUES ('crisismerge', 64);
