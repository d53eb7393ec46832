//! The plans PostgreSQL chooses for listings, with sequential scans made as dear as they
//! can be: every listing can be served by an index within the project, so a plan that
//! still reads the whole table means an index no longer matches its query (a sort whose
//! expression drifted from its index's, a filter without one).

use super::*;
use crate::PgStore;
use crate::testkit::{URL_VARIABLE, fresh_database};

async fn plan(c: &impl GenericClient, statement: &Statement) -> String {
    let sql = format!("EXPLAIN {}", statement.sql);
    all(c, &sql, &statement.params())
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn every_listing_searches_an_index_within_the_project() {
    let cluster = std::env::var(URL_VARIABLE).unwrap();
    let store = PgStore::connect(&fresh_database(&cluster).await, &crate::testkit::test_key())
        .await
        .unwrap();
    let client = store.client().await.unwrap();
    // Two projects of 5,000 leads, 1 in 100 named Okafor, some without a price or name.
    client
        .batch_execute(
            "INSERT INTO projects (public_id, name, currency, lost_mapping, created_at)
                 VALUES ('a', 'A', 'EUR', '{}', 0), ('b', 'B', 'EUR', '{}', 0);
             INSERT INTO leads (project_id, status, price, created_at, updated_at, data,
                 first_name, last_name, search_text, has_gclid, has_cid, has_fbp,
                 has_fbc, has_msclkid, has_li_fat_id, created_via)
             SELECT 1 + n % 2, (ARRAY['open', 'pending', 'rated', 'lost'])[1 + n % 4],
                 CASE WHEN n % 3 > 0 THEN n END, n, n, '{}',
                 CASE WHEN n % 5 > 0 THEN 'First' || n END,
                 CASE WHEN n % 100 = 0 THEN 'Okafor' ELSE 'Name' || n END,
                 lower('First' || n || chr(10) || CASE WHEN n % 100 = 0 THEN 'Okafor' ELSE 'Name' || n END),
                 false, false, false, false, false, false, 'server'
             FROM generate_series(1, 10000) AS n;",
        )
        .await
        .unwrap();
    // As autovacuum leaves it: statistics, and the trigram index's pending entries
    // merged (each batch of statements is one transaction, which VACUUM is not).
    for sql in [
        "VACUUM ANALYZE leads",
        "VACUUM ANALYZE lead_search",
        "SET enable_seqscan = off",
    ] {
        client.batch_execute(sql).await.unwrap();
    }
    let project = ProjectId(1);
    for (query, index) in [
        ("", "leads_created"),
        ("status=open", "leads_status"),
        // Two statuses: either the status index or the creation order, filtered.
        ("status=open,pending&sort=createdAt:asc", "Index"),
        ("sort=firstName:asc", "leads_first_name"),
        ("sort=lastName:desc", "leads_last_name"),
        ("sort=email:asc", "leads_email"),
        ("sort=price:desc", "leads_price"),
        ("search=ab", "leads_created"),
        ("email=a@example.com", "leads_email_key"),
        ("phone=%2B4917012345", "leads_phone_key"),
        ("formName=Contact", "leads_form_key"),
    ] {
        let query = LeadQuery::from_pairs(form_urlencoded_pairs(query)).unwrap();
        let (_, nullable) = sort_key(query.sort.field);
        let first = if nullable { Part::Keyed } else { Part::All };
        let page = plan(&client, &page_statement(project, &query, first, 50, 0)).await;
        assert!(!page.contains("Seq Scan"), "{query:?}:\n{page}");
        assert!(page.contains(index), "{query:?} uses {index}:\n{page}");
        assert!(
            !page.contains("Sort Key"),
            "{query:?} sorts nothing:\n{page}"
        );
        if nullable {
            // The leads without the key: found by the key's index (which holds them
            // too), or read along the primary key.
            let rest = plan(
                &client,
                &page_statement(project, &query, Part::Unkeyed, 50, 0),
            )
            .await;
            assert!(!rest.contains("Seq Scan"), "{rest}");
        }
        // A count may read any index that starts with the project.
        for part in [Part::All, first] {
            let count = plan(&client, &count_statement(project, &query, part)).await;
            assert!(!count.contains("Seq Scan"), "{query:?}:\n{count}");
        }
    }
    // A search, alone or by status, counts its matches in the trigram index and the
    // narrow `lead_search` alone (with the counts of its tabs), and pages them from the
    // index (sorting the matches) or, for a term so common that a page fills soon,
    // along the creation order.
    for query in [
        "search=okafor",
        "search=okafor&status=open",
        "search=okafor&status=open,lost",
    ] {
        let search = LeadQuery::from_pairs(form_urlencoded_pairs(query)).unwrap();
        let count = plan(&client, &count_statement(project, &search, Part::All)).await;
        assert!(count.contains("lead_search_text"), "{count}");
        assert!(!count.contains("on leads"), "{count}");
        let page = plan(&client, &page_statement(project, &search, Part::All, 50, 0)).await;
        assert!(
            page.contains("lead_search_text") || page.contains("leads_created"),
            "{page}"
        );
        assert!(!page.contains("Seq Scan"), "{page}");
    }
    // With another filter, the count reads the leads too.
    let search = LeadQuery::from_pairs([("search", "okafor"), ("formName", "Contact")]);
    let count = plan(
        &client,
        &count_statement(project, &search.unwrap(), Part::All),
    )
    .await;
    assert!(count.contains("lead_search"), "{count}");
    assert!(count.contains("on leads"), "{count}");
    assert!(!count.contains("Seq Scan"), "{count}");
}

fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key.to_owned(), value.replace("%2B", "+"))
        })
        .collect()
}
