//! The whole service in a test's own process (feature `testkit`): the lead API, and the
//! dashboard and the conversion worker when asked for, on a port of its own over a fresh
//! database of the backend under test. The one harness of the end-to-end tests: the
//! client's, the browsers' and the server's own.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use leadtrack_client::Client;
use leadtrack_core::Store;
use leadtrack_core::project::{NewProject, Project};
use leadtrack_forward::{Worker, WorkerConfig};
use leadtrack_postgres::PgStore;
use leadtrack_sqlite::SqliteStore;
use tokio::net::TcpListener;
use tokio::sync::watch;
use warp::Filter;

use crate::Readiness;

/// What [`spawn_app`] starts, besides the lead API.
#[derive(Clone, Debug)]
pub struct Parts {
    /// The public id of the project the app's key belongs to.
    pub project: &'static str,
    /// The lead routes' settings.
    pub config: leadtrack_warp::Config,
    /// Serve the dashboard too, with these settings.
    pub dashboard: Option<leadtrack_dashboard::Config>,
    /// Run the conversion worker and the lead fetcher from the start (else
    /// [`TestApp::start_worker`]).
    pub worker: bool,
    /// The lead sources' settings (Meta's app, for its webhook).
    pub sources: leadtrack_sources::Config,
    /// The addresses the worker, the fetcher and REST hooks may call: the mock platforms' loopback
    /// and `http://` by default ([`leadtrack_core::testkit::mock_targets`]).
    pub targets: leadtrack_core::target::Targets,
}

impl Default for Parts {
    /// The lead API alone, for project `prj_e2e`.
    fn default() -> Self {
        Self {
            project: "prj_e2e",
            config: leadtrack_warp::Config::default(),
            dashboard: None,
            worker: false,
            sources: leadtrack_sources::Config::default(),
            targets: leadtrack_core::testkit::mock_targets(),
        }
    }
}

/// A running app. It stops, worker included, when dropped.
pub struct TestApp {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The store behind it, for arranging what a test does not go through HTTP for.
    pub store: Arc<dyn Store>,
    /// The project of [`TestApp::api_key`].
    pub project: Project,
    /// An API key of the project.
    pub api_key: String,
    start_worker: Box<dyn Fn() + Send + Sync>,
    stop: watch::Sender<bool>,
}

impl TestApp {
    /// A client with the project's API key.
    pub fn client(&self) -> Client {
        Client::new(&self.base_url).with_api_key(&self.api_key)
    }

    /// A client without a key, as browsers call createLead.
    pub fn anonymous(&self) -> Client {
        Client::new(&self.base_url)
    }

    /// Waits until the work queues are empty (no job, lead webhook event or lead fetch
    /// queued or running): whatever the worker and the lead fetcher had to do is done, and
    /// nothing else will be.
    ///
    /// # Panics
    ///
    /// When they are not empty within 30 s, or the store cannot say.
    pub async fn queues_drained(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let depths = self
                .store
                .queue_depth(Utc::now())
                .await
                .expect("queue depths");
            let busy = [depths.jobs, depths.webhook_events, depths.lead_fetches]
                .iter()
                .any(|depth| depth.queued + depth.running > 0);
            if !busy {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the delivery queues never drained: {depths:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts the conversion worker (polling every 50 ms), until the app stops.
    pub fn start_worker(&self) {
        (self.start_worker)();
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Starts an app with `parts` on a fresh database: a temporary SQLite file, or a fresh
/// PostgreSQL database with `LEADTRACK_TEST_BACKEND=postgres`.
pub async fn spawn_app(parts: Parts) -> TestApp {
    match leadtrack_postgres::testkit::contract_database().await {
        Some(url) => {
            let store = PgStore::connect(&url, &leadtrack_postgres::testkit::test_key())
                .await
                .expect("PostgreSQL store");
            spawn_app_on(store, parts).await
        }
        None => {
            let store = SqliteStore::open_temporary().await;
            spawn_app_on(store.expect("temporary store"), parts).await
        }
    }
}

/// Starts an app with `parts` on `store`, on an already-bound listener (the port accepts
/// at once).
pub async fn spawn_app_on<S: Store + Clone>(store: S, parts: Parts) -> TestApp {
    let new = NewProject {
        public_id: Some(parts.project.to_owned()),
        name: parts.project.to_uppercase(),
        currency: Some("EUR".into()),
    };
    let project = store
        .create_project(new, Utc::now())
        .await
        .expect("project");
    let key = store.issue_api_key(project.id, Utc::now()).await;
    let api_key = key.expect("API key").key;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind port 0");
    let base_url = format!("http://{}", listener.local_addr().expect("local address"));
    let (stop, stopped) = watch::channel(false);
    let until_stopped = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    };
    let sources = leadtrack_sources::routes(store.clone(), parts.sources);
    let pages = match parts.dashboard {
        Some(config) => sources
            .or(leadtrack_dashboard::routes(store.clone(), config))
            .unify()
            .boxed(),
        None => sources.boxed(),
    };
    // REST hooks may name the same loopback mocks the worker may call.
    let config = leadtrack_warp::Config {
        targets: parts.targets.clone(),
        ..parts.config
    };
    let app = crate::app_with(store.clone(), config, Readiness::new(), pages);
    tokio::spawn(crate::serve_app(listener, app, until_stopped()));
    let (worker_store, targets) = (store.clone(), parts.targets.clone());
    let start_worker = move || {
        let config = WorkerConfig {
            poll_interval: Duration::from_millis(50),
            targets: targets.clone(),
            ..WorkerConfig::default()
        };
        let worker = Worker::new(worker_store.clone(), config);
        tokio::spawn(worker.run(until_stopped()));
        // Announced leads too, retried within a second rather than half a minute, and
        // LinkedIn synced five times a second.
        let fetching = leadtrack_sources::FetcherConfig {
            poll_interval: Duration::from_millis(50),
            first_retry: chrono::Duration::milliseconds(200),
            sync_every: Duration::from_millis(200),
            targets: targets.clone(),
            ..leadtrack_sources::FetcherConfig::default()
        };
        let fetcher = leadtrack_sources::Fetcher::new(worker_store.clone(), fetching);
        tokio::spawn(fetcher.run(until_stopped()));
    };
    if parts.worker {
        start_worker();
    }
    TestApp {
        base_url,
        store: Arc::new(store),
        project,
        api_key,
        start_worker: Box::new(start_worker),
        stop,
    }
}
