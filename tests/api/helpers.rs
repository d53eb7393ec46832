//! `spawn_app()`: a server on port 0 over a fresh database: a temporary SQLite file, or a
//! PostgreSQL database with `LEADTRACK_TEST_BACKEND=postgres`.

use chrono::Utc;
use leadtrack::client::Client;
use std::sync::Arc;

use leadtrack::core::Store;
use leadtrack::core::label::{LabelMapping, NewLabel};
use leadtrack::core::project::{NewProject, Project};
use leadtrack::sqlite::SqliteStore;
use leadtrack_postgres::PgStore;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use uuid::Uuid;

/// A running server and what tests need to talk to it.
pub(crate) struct TestApp {
    /// `http://127.0.0.1:PORT`
    pub(crate) base_url: String,
    /// A client with the project's API key.
    pub(crate) client: Client,
    /// The store behind the server, for arranging state tests do not go through HTTP for.
    pub(crate) store: Arc<dyn Store>,
    /// The project of `client`'s key, public id `prj_e2e`.
    pub(crate) project: Project,
    shutdown: Option<oneshot::Sender<()>>,
}

/// Starts a server on an already-bound listener (no waiting: the port accepts at once).
pub(crate) async fn spawn_app() -> TestApp {
    match leadtrack_postgres::testkit::contract_database().await {
        Some(url) => spawn_app_on(PgStore::connect(&url).await.expect("PostgreSQL store")).await,
        None => {
            spawn_app_on(
                SqliteStore::open_temporary()
                    .await
                    .expect("temporary store"),
            )
            .await
        }
    }
}

async fn spawn_app_on<S: Store + Clone>(store: S) -> TestApp {
    let project = store
        .create_project(
            NewProject {
                public_id: Some("prj_e2e".into()),
                name: "E2E".into(),
                currency: Some("EUR".into()),
            },
            Utc::now(),
        )
        .await
        .expect("project");
    let api_key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .expect("key")
        .key;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind port 0");
    let base_url = format!("http://{}", listener.local_addr().expect("local address"));
    let (shutdown, stop) = oneshot::channel::<()>();
    tokio::spawn(leadtrack_server::serve(
        listener,
        store.clone(),
        Default::default(),
        async {
            let _ = stop.await;
        },
    ));
    TestApp {
        client: Client::new(&base_url).with_api_key(&api_key),
        base_url,
        store: Arc::new(store),
        project,
        shutdown: Some(shutdown),
    }
}

impl TestApp {
    /// A client without a key, as browsers call createLead.
    pub(crate) fn anonymous(&self) -> Client {
        Client::new(&self.base_url)
    }

    /// A label of the project that marks leads as done.
    pub(crate) async fn label(&self, mapping: LabelMapping) -> Uuid {
        self.store
            .create_label(
                self.project.id,
                NewLabel {
                    name: "Customer".into(),
                    mark_as_done: true,
                    mapping,
                },
                Utc::now(),
            )
            .await
            .expect("label")
            .id
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}
