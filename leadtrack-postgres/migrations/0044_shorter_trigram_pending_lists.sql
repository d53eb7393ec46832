-- Issue #48: the trigram indexes keep a pending list of 1 MB instead of the default 4 MB.
-- An insert that finds the list full moves it into the index before it returns, and with
-- creates written in groups that pause holds up every create of its group: at 64
-- connections the creates' p99 went from 136-168 ms to 86-102 ms, for 2-8% fewer creates
-- a second (docs/performance.md).

ALTER INDEX leads_q_text SET (gin_pending_list_limit = 1024);
ALTER INDEX lead_search_text SET (gin_pending_list_limit = 1024);
