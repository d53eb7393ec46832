-- The trigram index merges its segments 16 at a time (SQLite's default is 4), and is forced to
-- only once 64 wait at one level (default 16). Each lead's insert writes a small segment;
-- fewer, larger merges rewrite each entry fewer times, so the writer spends less time merging
-- and its commits stall less often (createLead's p99 under load, in `docs/performance.md`),
-- while a search reads a few more segments. See
-- <https://sqlite.org/fts5.html#the_automerge_configuration_option> and
-- <https://sqlite.org/fts5.html#the_crisismerge_configuration_option>.

INSERT INTO leads_search (leads_search, rank) VALUES ('automerge', 16);
INSERT INTO leads_search (leads_search, rank) VALUES ('crisismerge', 64);
