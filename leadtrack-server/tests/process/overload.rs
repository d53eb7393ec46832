//! Overload on a real server: a read past its time limit is refused and answered `503
//! unavailable` with `Retry-After`, while the quick lookups of other requests go on.

use std::time::Duration;

use chrono::Utc;
use futures_util::future::join_all;
use leadtrack_client::{Client, Error};
use leadtrack_core::api::LeadIdentifier;
use leadtrack_core::project::NewProject;
use leadtrack_core::request::{CreateRoute, LeadQuery, NewLead};
use leadtrack_core::{Admin, ErrorCode, LeadStore};
use leadtrack_sqlite::{ReadPool, SqliteOptions, SqliteStore};
use serde_json::json;
use tokio::net::TcpListener;

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
    let project = store
        .create_project(
            NewProject {
                public_id: Some("acme".into()),
                name: "ACME".into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .unwrap()
        .key;
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
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client =
        Client::new(format!("http://{}", listener.local_addr().unwrap())).with_api_key(&key);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(leadtrack_server::serve(
        listener,
        store.clone(),
        Default::default(),
        async {
            let _ = stopped.await;
        },
    ));

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

    let _ = stop.send(());
    server.await.unwrap();
    store.close().await;
}
