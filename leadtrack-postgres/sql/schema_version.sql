-- How many of the migrations in `migrations/` the database has applied: one row, made
-- before the first migration and kept at 0 until it.
CREATE TABLE IF NOT EXISTS leadtrack_schema (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    version integer NOT NULL
);
INSERT INTO leadtrack_schema (version) VALUES (0) ON CONFLICT DO NOTHING;
