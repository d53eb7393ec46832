//! An import into a new database: written a batch a statement, its counts kept by the
//! statement's trigger, and the planner's statistics brought up to date after it, so that
//! the foreign-key checks of the next batches look a lead up by its key instead of reading
//! all the project's leads through whichever index the planner took for an empty table.
#![cfg(leadtrack_postgres)]

use chrono::{Duration, Utc};
use leadtrack_core::LeadStore;
use leadtrack_core::import::{ImportCounts, ImportedLead};
use leadtrack_core::testkit::{data, project};
use serde_json::json;

/// The forms the leads came from, a third each.
const FORMS: [&str; 3] = ["Contact", "Demo", "Quote"];

/// PostgreSQL's foreign-key check of a lead event (`RI_FKey_check_ins`), prepared as it
/// is: once a session, its generic plan kept until something invalidates it.
const KEY_CHECK: &str = "SET plan_cache_mode = force_generic_plan;
    PREPARE key_check (bigint, bigint) AS
    SELECT 1 FROM ONLY leads x WHERE project_id = $1 AND id = $2 FOR KEY SHARE OF x";

#[tokio::test]
async fn an_import_into_a_new_database_counts_its_leads_and_leaves_the_key_checks_keyed() {
    let (store, url) = crate::support::fresh_store().await;
    let db = crate::support::client(&url).await;
    let acme = project(&store, "acme").await;
    let plan = || async {
        let explain = format!("EXPLAIN EXECUTE key_check({}, 1)", acme.id.0);
        let rows = db.simple_query(&explain).await.unwrap();
        let lines = rows.iter().filter_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        });
        lines.collect::<Vec<_>>().join("\n")
    };
    // An empty table has no statistics: the planner may take any index led by the project.
    db.batch_execute(KEY_CHECK).await.unwrap();
    let empty = plan().await;
    assert!(!empty.contains("leads_pkey"), "{empty}");

    let start = Utc::now() - Duration::days(400);
    let leads: Vec<ImportedLead> = (0..3_000)
        .map(|i| ImportedLead {
            line: i + 2,
            data: data(json!({
                "userData": {"email": format!("lead{i}@example.com")},
                "formData": {"formName": FORMS[usize::try_from(i % 3).unwrap()]},
                "attributionData": if i % 4 == 0 { json!({"gclid": format!("g{i}")}) } else { json!({}) },
            })),
            created_at: start + Duration::minutes(i64::try_from(i).unwrap()),
        })
        .collect();
    let counts = store.import_leads(acme.id, &leads).await.unwrap();
    assert_eq!(
        counts,
        ImportCounts {
            imported: 3_000,
            duplicates: 0
        }
    );

    // The statistics the import brought up to date replaced the session's plan.
    let keyed = plan().await;
    assert!(keyed.contains("leads_pkey"), "{keyed}");

    // The counts readers see (kept, and the uncounted leads) are the counts of the rows.
    let counted = |sql: &'static str| {
        let db = &db;
        async move {
            let row = db.query_one(sql, &[]).await.unwrap();
            (row.get::<_, i64>(0), row.get::<_, i64>(1))
        }
    };
    let statuses = counted(
        "SELECT (SELECT sum(total)::bigint FROM lead_status_totals),
                (SELECT count(*) FROM leads)",
    );
    assert_eq!(statuses.await, (3_000, 3_000));
    let forms = counted(
        "SELECT (SELECT sum(total)::bigint FROM lead_facet_totals WHERE facet = 'form_name'
                 AND value = 'Demo'),
                (SELECT count(*) FROM leads WHERE form_name = 'Demo')",
    );
    assert_eq!(forms.await, (1_000, 1_000));
    let clicked = counted(
        "SELECT (SELECT sum(total)::bigint FROM lead_facet_totals WHERE facet = 'has_gclid'
                 AND value = 'true'),
                (SELECT count(*) FROM leads WHERE has_gclid)",
    );
    assert_eq!(clicked.await, (750, 750));
    let searchable =
        counted("SELECT (SELECT count(*) FROM lead_search), (SELECT count(*) FROM leads)");
    assert_eq!(searchable.await, (3_000, 3_000));
}
