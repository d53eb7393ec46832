//! `spawn_app()`: the server's test harness (`leadtrack_server::testkit`) with the lead API
//! alone, and a label the tests rate with.

use chrono::Utc;
use leadtrack::core::label::{LabelMapping, NewLabel};
use leadtrack_server::testkit::{Parts, TestApp};
use uuid::Uuid;

/// The lead API on a port of its own, for project `prj_e2e`.
pub(crate) async fn spawn_app() -> TestApp {
    leadtrack_server::testkit::spawn_app(Parts::default()).await
}

/// A label of the app's project that marks leads as done.
pub(crate) async fn label(app: &TestApp, mapping: LabelMapping) -> Uuid {
    let label = NewLabel {
        name: "Customer".into(),
        mark_as_done: true,
        mapping,
    };
    let created = app
        .store
        .create_label(app.project.id, label, Utc::now())
        .await;
    created.expect("label").id
}
