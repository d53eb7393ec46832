//! The first run: when the database has no project yet, `serve` creates one with a key and
//! the starter labels ([`starter_labels`]);
//! when it has no user yet, it creates an owner of every project with a generated password.
//! Each is printed once, in lines short enough to copy.

use std::net::SocketAddr;

use chrono::Utc;
use leadtrack_core::account::{NewUser, Password};
use leadtrack_core::label::starter_labels;
use leadtrack_core::types::Role;
use leadtrack_core::{Accounts, Admin};

use crate::Failure;
use crate::admin;

/// On the first run, creates a project and its owner, and prints how to use them.
pub(crate) async fn first_run<S: Admin + Accounts>(
    store: &S,
    addr: SocketAddr,
    owner_email: &str,
) -> Result<(), Failure> {
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    if store.projects().await.map_err(Failure::store)?.is_empty() {
        let (project, key) =
            admin::create_project(store, "My project".to_owned(), None, None).await?;
        // A first project starts ratable (`server project create` makes empty ones).
        for label in starter_labels() {
            store
                .create_label(project.id, label, Utc::now())
                .await
                .map_err(Failure::store)?;
        }
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
    }
    if store.users().await.map_err(Failure::store)?.is_empty() {
        let password = Password::generate();
        let new = {
            let (email, password) = (owner_email.to_owned(), password.clone());
            tokio::task::spawn_blocking(move || NewUser::new(&email, Some("Owner"), &password))
                .await
                .map_err(|err| Failure(format!("cannot hash the owner's password: {err}")))?
                .map_err(|reason| Failure(format!("--owner-email: {reason}")))?
        };
        let owner = store
            .create_user(new, Utc::now())
            .await
            .map_err(Failure::store)?;
        for project in store.projects().await.map_err(Failure::store)? {
            store
                .add_member(project.id, owner.id, Role::Owner, Utc::now())
                .await
                .map_err(Failure::store)?;
        }
        say!("Sign in to the dashboard at http://{host}/");
        say!("  email:    {}", owner.email);
        say!("  password: {}", password.expose());
        say!("The password is shown only this once: `server user set-password` sets a new one.");
        say!();
    }
    Ok(())
}
