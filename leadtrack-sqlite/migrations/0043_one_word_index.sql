-- One index finds the words of `search` and `q`, and the writer keeps it off the path of a
-- lead's insert (issue #48).
--
-- `lead_words` holds each lead's search text (the lowercased fields `search` reads) and its
-- folded `q` text, each with a line break after it, in two columns of trigrams with their
-- places: a term's phrase matches exactly the leads whose column holds it, so a search is
-- counted in the index alone, and a word of two characters is found by the trigrams it
-- begins (every two characters of a text begin one), read from the index's vocabulary
-- (`words.rs`, `listing.rs`). Its rowid is the lead's project above its id (`rowid.rs`), so
-- a search reads only its project's part.
--
-- The writer indexes new leads in batches after their commit (`words::catch_up`), in id
-- order up to `lead_words_state.indexed_to`; ids only grow (AUTOINCREMENT), so every lead at
-- or below it is in the index and every lead above it is not yet. Searches check the few
-- leads above it one by one. A lead already indexed whose text changes, or that goes, is
-- kept right by the triggers below, in its own transaction.
--
-- The three indexes this replaces go, with the short words' table, the order breaks and the
-- per-project count that only served their search strategies. The new index starts empty: the
-- writer fills it on its own after the upgrade, and searches stay exact meanwhile (they check
-- the leads above the mark).

DROP TRIGGER leads_search_insert;
DROP TRIGGER leads_search_update;
DROP TRIGGER leads_search_delete;
DROP TABLE leads_search;
DROP TRIGGER leads_q_insert;
DROP TRIGGER leads_q_update;
DROP TRIGGER leads_q_delete;
DROP TABLE leads_q;
DROP TRIGGER leads_q_grams_delete;
DROP TABLE leads_q_grams;
DROP TRIGGER leads_order_insert;
DROP TRIGGER leads_order_update;
DROP TRIGGER leads_order_delete;
DROP TABLE lead_order_breaks;
DROP TRIGGER leads_count_insert;
DROP TRIGGER leads_count_delete;
DROP TABLE lead_counts;

CREATE VIRTUAL TABLE lead_words USING fts5 (
    search_text, q_text, content = '', contentless_delete = 1,
    tokenize = 'trigram case_sensitive 1'
);
-- Its vocabulary, per column: the trigrams a word of two characters begins.
CREATE VIRTUAL TABLE lead_words_terms USING fts5vocab (lead_words, col);
-- Larger, rarer merges (migration 16 says why).
INSERT INTO lead_words (lead_words, rank) VALUES ('automerge', 16);
INSERT INTO lead_words (lead_words, rank) VALUES ('crisismerge', 64);

CREATE TABLE lead_words_state (
    only        INTEGER PRIMARY KEY CHECK (only = 1),
    indexed_to  INTEGER NOT NULL
) STRICT;
INSERT INTO lead_words_state (only, indexed_to) VALUES (1, 0);

CREATE TRIGGER lead_words_update AFTER UPDATE OF search_text, q_text ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    DELETE FROM lead_words WHERE rowid = old.project_id << 36 | old.id;
    INSERT INTO lead_words (rowid, search_text, q_text) VALUES (
        new.project_id << 36 | new.id, new.search_text || char(10), new.q_text || char(10)
    );
END;
CREATE TRIGGER lead_words_delete AFTER DELETE ON leads
WHEN old.id <= (SELECT indexed_to FROM lead_words_state)
BEGIN
    DELETE FROM lead_words WHERE rowid = old.project_id << 36 | old.id;
END;

-- The inbox's order holds each lead's status too, as the facets' indexes do: a page deep in
-- the default listing (every status but spam) skips the leads before it in the index alone,
-- without reading each one's row for its status.
DROP INDEX leads_created;
CREATE INDEX leads_created ON leads (project_id, created_at, id, status);
