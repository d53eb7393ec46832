-- A person's leads can be erased at their request (core's store::erasure): when, per lead.
-- Erased leads are no longer a person's, so the lookups of a person leave them out.
ALTER TABLE leads ADD COLUMN erased_at bigint;
