//! A server killed (SIGKILL) in the middle of its work: what it acknowledged is kept, and
//! what it derives from it catches up on its own.

use std::path::Path;

use leadtrack_client::Client;
use leadtrack_core::api::{CreateLeadRequest, LeadIdentifier, UserData};
use leadtrack_core::request::LeadQuery;

use crate::process::binary::{create_acme, fresh_db, open_store, start_serve};

/// No limit on one key's requests: the crash test's senders go as fast as the server.
const UNLIMITED: &[&str] = &["--rate-limit-key", "off"];

/// A server killed (SIGKILL) while leads pour in serves every lead it acknowledged after
/// a restart, each found by `q` and `search` at once; and its words' index and kept counts
/// then catch up on their own to what a rebuild from the leads gives. On both backends.
#[tokio::test]
async fn a_crash_under_load_loses_no_acknowledged_lead_and_derived_data_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let server = start_serve(&db, UNLIMITED).await;
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    // 16 senders create leads, each named uniquely, until the server is gone.
    let senders: Vec<_> = (0..16)
        .map(|sender| {
            let client = Client::new(&server.base_url).with_api_key(&key);
            let acknowledged = std::sync::Arc::clone(&acknowledged);
            tokio::spawn(async move {
                for n in 0.. {
                    let name = format!("Zq{sender:02}n{n:05}");
                    let lead = CreateLeadRequest {
                        user_data: Some(UserData {
                            last_name: Some(name.clone()),
                            ..UserData::default()
                        }),
                        ..CreateLeadRequest::default()
                    };
                    match client.create_server_side_lead(&lead).await {
                        Ok(created) => acknowledged.lock().unwrap().push((created.lead_id, name)),
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while acknowledged.lock().unwrap().len() < 1_500 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "leads stored too slowly"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    server.crash().await;
    for sender in senders {
        sender.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();

    let server = start_serve(&db, UNLIMITED).await;
    let client = Client::new(&server.base_url).with_api_key(&key);
    let all = client.get_leads(&LeadQuery::default()).await.unwrap();
    assert!(
        all.total >= acknowledged.len() as u64,
        "{} listed",
        all.total
    );
    for (id, name) in &acknowledged {
        let lead = client.get_lead(&LeadIdentifier::LeadId(*id)).await.unwrap();
        assert_eq!(lead.last_name.as_deref(), Some(name.as_str()));
        let by_q = LeadQuery {
            q: vec![name.to_lowercase()],
            ..LeadQuery::default()
        };
        let by_search = LeadQuery {
            search: Some(name.clone()),
            ..LeadQuery::default()
        };
        for query in [by_q, by_search] {
            let found = client.get_leads(&query).await.unwrap();
            let ids: Vec<_> = found.leads.iter().map(|lead| lead.id).collect();
            assert_eq!((found.total, ids), (1, vec![*id]), "{query:?}");
        }
    }
    assert!(server.terminate().await.success());

    assert_eq!(derived_data_differences(&db).await, Vec::<String>::new());
}

/// How the derived data of the database `db` differs from a rebuild (none: it matches),
/// once it has caught up: the SQLite store's words' index, which its writer fills when
/// idle, and the kept counts; PostgreSQL's kept counts, which its counter adds new leads
/// to.
async fn derived_data_differences(db: &Path) -> Vec<String> {
    let db_text = db.to_str().unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    if db_text.starts_with("postgres://") {
        let key = leadtrack_postgres::testkit::test_key();
        let store = leadtrack_postgres::PgStore::connect(db_text, &key)
            .await
            .unwrap();
        while store.uncounted().await.unwrap() > 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the counts never caught up"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        return store.check_derived().await.unwrap();
    }
    let store = open_store(db).await;
    while store.words_behind().await.unwrap() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the index never caught up"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    store.check_derived().await.unwrap()
}
