//! The first run: when the database has no project yet, `serve` creates one with a key and
//! prints them, once, with a request to try.

use std::net::SocketAddr;

use leadtrack_core::Admin;

use crate::Failure;
use crate::admin;

/// On the first run, creates a project and prints how to use it.
pub(crate) async fn first_run<S: Admin>(store: &S, addr: SocketAddr) -> Result<(), Failure> {
    if !store.projects().await.map_err(Failure::store)?.is_empty() {
        return Ok(());
    }
    let (project, key) = admin::create_project(store, "My project".to_owned(), None, None).await?;
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    say!("No project yet, so leadtrack created one.");
    say!("  project id: {}", project.public_id);
    say!("  API key:    {key}");
    say!("The key is shown only this once: store it somewhere safe.");
    say!();
    say!("Try it:");
    say!(
        "  curl -i http://{host}/api/leads/createServerSideLead -H 'Content-Type: application/json' -H 'X-API-Key: {key}' -d '{{\"userData\":{{\"email\":\"ada@example.com\"}}}}'"
    );
    say!(
        "or in a browser: http://{host}/demo?projectId={}",
        project.public_id
    );
    say!();
    Ok(())
}
