//! Overload on a real server: a read past its time limit is refused and answered `503
//! unavailable` with `Retry-After`, while the quick lookups of other requests go on.

use std::time::Duration;

use chrono::Utc;
use futures_util::future::join_all;
use leadtrack_client::Error;
use leadtrack_core::api::LeadIdentifier;
use leadtrack_core::request::{CreateRoute, LeadQuery, NewLead};
use leadtrack_core::{ErrorCode, LeadStore};
use leadtrack_server::testkit::{Parts, spawn_app_on};
use leadtrack_sqlite::{ReadPool, SqliteOptions, SqliteStore};
use serde_json::json;

#[tokio::test]
async fn a_search_past_the_time_limit_answers_503_and_lookups_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = SqliteOptions::default();
    // No time at all for heavy reads: every search is refused, its limit already past.
    let options = SqliteOptions {
        heavy: ReadPool {
            time_limit: Duration::ZERO,
            ..defaults.heavy
        },
        ..defaults
    };
    let store = SqliteStore::open_with(dir.path().join("db"), options)
        .await
        .unwrap();
    let parts = Parts {
        project: "acme",
        ..Parts::default()
    };
    let app = spawn_app_on(store.clone(), parts).await;
    let project = app.project.clone();
    let created = join_all((0..200).map(|i| {
        let store = store.clone();
        let body = json!({"projectId": "acme", "userData": {"email": format!("lead{i}@x.io")}});
        let serde_json::Value::Object(body) = body else {
            unreachable!()
        };
        let data = NewLead::from_object(body, CreateRoute::Server)
            .unwrap()
            .data;
        async move {
            store
                .create_lead_via(project.id, CreateRoute::Server, data, Utc::now())
                .await
        }
    }))
    .await;
    let lead = created[0].as_ref().unwrap().lead_id;
    let client = app.client();

    let search = LeadQuery {
        search: Some("lead".into()),
        ..LeadQuery::default()
    };
    match client.get_leads(&search).await {
        Err(Error::Api {
            status,
            body,
            retry_after,
        }) => {
            assert_eq!(status, 503);
            assert_eq!(body.code, ErrorCode::Unavailable);
            assert!(retry_after.is_some(), "no Retry-After");
        }
        other => panic!("a search with no time answered {other:?}"),
    }
    let found = client
        .get_lead(&LeadIdentifier::LeadId(lead))
        .await
        .unwrap();
    assert_eq!(found.id, lead);

    drop(app);
    store.close().await;
}
