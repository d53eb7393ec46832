-- One trigram index finds the words of `search` and `q` (issue #48): `leads_q_text`, on each
-- lead's folded text, which holds every field `search` reads. A search looks its folded term
-- up there and checks the lead's own search text (`listing.rs`). The narrow copy of the
-- search texts, its own trigram index and the triggers that kept it go: each insert wrote
-- a second row and a second index's entries.

DROP TRIGGER lead_search_copy ON leads;
DROP TRIGGER lead_search_update ON leads;
DROP FUNCTION lead_search_copy();
DROP TABLE lead_search;
-- The insert's set-based counts, without the copy.
CREATE OR REPLACE FUNCTION leads_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lead_facet_counts (project_id, facet, value, status, slot, total)
        SELECT l.project_id, f.facet, f.value, l.status, (l.id % 16)::smallint, count(*)
        FROM inserted l CROSS JOIN LATERAL lead_facets(l) f
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (project_id, facet, value, status, slot)
        DO UPDATE SET total = lead_facet_counts.total + excluded.total;
    INSERT INTO lead_status_counts (project_id, status, slot, total)
        SELECT project_id, status, (id % 16)::smallint, count(*)
        FROM inserted
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
        ON CONFLICT (project_id, status, slot)
        DO UPDATE SET total = lead_status_counts.total + excluded.total;
    RETURN NULL;
END
$$;
