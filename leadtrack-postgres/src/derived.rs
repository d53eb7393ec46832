//! The data derived from the leads (the kept counts per status and per facet's value)
//! checked against a recount of the leads themselves ([`crate::PgStore::check_derived`]).
//! The words' trigram index is PostgreSQL's own, kept in the leads' transactions.

use deadpool_postgres::GenericClient;

use crate::Error;

/// How the kept counts differ from a recount: one line per table that differs, none when
/// they match. A count is kept in slots (migration 1); the slots' sum is compared.
pub(crate) async fn check(c: &impl GenericClient) -> Result<Vec<String>, Error> {
    let mut differences = Vec::new();
    for (table, kept, recounted) in [
        (
            "lead_status_counts",
            "SELECT project_id, status, sum(total) FROM lead_status_counts
             GROUP BY 1, 2 HAVING sum(total) <> 0",
            "SELECT project_id, status, count(*)::numeric FROM leads GROUP BY 1, 2",
        ),
        (
            "lead_facet_counts",
            "SELECT project_id, facet, value, status, sum(total) FROM lead_facet_counts
             GROUP BY 1, 2, 3, 4 HAVING sum(total) <> 0",
            "SELECT l.project_id, f.facet, f.value, l.status, count(*)::numeric
             FROM leads l CROSS JOIN LATERAL lead_facets(l) f GROUP BY 1, 2, 3, 4",
        ),
    ] {
        let sql = format!(
            "SELECT (SELECT count(*) FROM ({kept} EXCEPT {recounted}) AS a)
                  + (SELECT count(*) FROM ({recounted} EXCEPT {kept}) AS b)"
        );
        let differ: i64 = c.query_one(&sql, &[]).await?.try_get(0)?;
        if differ > 0 {
            differences.push(format!("{table} differs from a recount in {differ} rows"));
        }
    }
    Ok(differences)
}
