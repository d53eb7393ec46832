-- A person's leads can be erased at their request (core's store::erasure): when, per lead.
-- Erased leads are no longer a person's, so the lookups of a person leave them out.
ALTER TABLE leads ADD COLUMN erased_at INTEGER;

-- The word index removes a lead's words from its pages when the lead leaves it or is
-- rewritten, rather than marking them deleted until a later merge: erased words are gone
-- from the file at once.
INSERT INTO lead_words (lead_words, rank) VALUES ('secure-delete', 1);
