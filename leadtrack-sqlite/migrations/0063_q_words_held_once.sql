-- Issue #48: the words' index holds a word of a lead's `q` text only when its search text
-- lacks it as a whole word (`words::indexed_q_text`, a SQL function of the store's
-- connections). A name, an email or a company's word is in both texts; a `q` word is now
-- looked up in both columns, so the index finds it in the search text. About a sixth of the
-- index at a million leads. `leads.q_text` stays whole: each lead's own check reads it.
--
-- The trigger that keeps an indexed lead's words right follows, and the leads up to the mark
-- are indexed again. The mark stays: the kept counts, moved with it, are right already.
-- Upgrading a store rewrites its index once: minutes at a million leads.

DROP TRIGGER lead_words_update;
CREATE TRIGGER lead_words_update AFTER UPDATE OF search_text, q_text ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    DELETE FROM lead_words WHERE rowid = old.project_id << 36 | old.id;
    INSERT INTO lead_words (rowid, search_text, q_text) VALUES (
        new.project_id << 36 | new.id, new.search_text || char(10),
        indexed_q_text(new.search_text, new.q_text) || char(10)
    );
END;

INSERT INTO lead_words (lead_words) VALUES ('delete-all');
INSERT INTO lead_words (rowid, search_text, q_text)
SELECT project_id << 36 | id, search_text || char(10),
    indexed_q_text(search_text, q_text) || char(10)
FROM leads WHERE id <= (SELECT indexed_to FROM lead_words_state);
