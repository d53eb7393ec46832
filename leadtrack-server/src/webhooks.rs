//! `webhook ...`: adding, listing and removing a project's lead webhooks. A running
//! server's worker reads a webhook's settings with every event it posts, so changes apply
//! to the next post.

use chrono::Utc;
use leadtrack_core::Admin;
use leadtrack_core::integration::Secret;
use leadtrack_core::time::format;
use leadtrack_core::webhook::{NewWebhook, WebhookStatus};
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::project;
use crate::cli::ProjectListing;
use crate::cli::WebhookCommand;

/// `webhook ...`: adds, lists or removes.
pub(crate) async fn webhook_command<S: Admin>(
    store: &S,
    command: WebhookCommand,
) -> Result<(), Failure> {
    match command {
        WebhookCommand::Add {
            project: id,
            url,
            events,
            secret,
            json,
        } => {
            let project = project(store, &id).await?;
            let generated = secret.is_none();
            let new = NewWebhook::new(&url, secret.map(Secret::new), events)
                .map_err(|err| Failure(err.to_string()))?;
            let hook = store
                .create_webhook(project.id, new, Utc::now())
                .await
                .map_err(Failure::store)?;
            let shown = generated.then(|| hook.secret.expose().to_owned());
            if json {
                say!(
                    "{}",
                    json!({"id": hook.id, "url": hook.url, "events": hook.events,
                           "createdAt": format(&hook.created_at), "secret": shown})
                );
            } else {
                say!(
                    "Added webhook {} to project {}: {} hears of {}.",
                    hook.id,
                    project.public_id,
                    hook.url,
                    hook.events
                );
                if let Some(secret) = shown {
                    say!("Signing secret (shown only this once): {secret}");
                }
            }
            Ok(())
        }
        WebhookCommand::List(ProjectListing { project: id, json }) => {
            let project = project(store, &id).await?;
            let hooks = store.webhooks(project.id).await.map_err(Failure::store)?;
            if json {
                let listed: Vec<Value> = hooks.iter().map(describe).collect();
                say!("{}", Value::Array(listed));
            } else if hooks.is_empty() {
                say!(
                    "Project {} has no webhooks; `server webhook add` adds one.",
                    project.public_id
                );
            } else {
                for status in &hooks {
                    print_status(status);
                }
            }
            Ok(())
        }
        WebhookCommand::Remove {
            project: id,
            id: hook,
        } => {
            let project = project(store, &id).await?;
            let removed = store
                .remove_webhook(project.id, hook)
                .await
                .map_err(Failure::store)?;
            if removed {
                say!("Removed webhook {hook} from project {}.", project.public_id);
                Ok(())
            } else {
                Err(Failure(format!(
                    "project {} has no webhook {hook}; `server webhook list` shows them",
                    project.public_id
                )))
            }
        }
    }
}

/// A webhook as `list --json` prints it: everything but the secret.
fn describe(status: &WebhookStatus) -> Value {
    let hook = &status.webhook;
    let last = status.last_attempt.as_ref().map(|attempt| {
        json!({
            "at": format(&attempt.at),
            "outcome": attempt.outcome,
            "httpStatus": attempt.http_status,
            "error": attempt.error,
        })
    });
    json!({
        "id": hook.id,
        "url": hook.url,
        "events": hook.events,
        "createdAt": format(&hook.created_at),
        "pending": status.pending,
        "delivered": status.delivered,
        "failed": status.failed,
        "lastAttempt": last,
    })
}

fn print_status(status: &WebhookStatus) {
    let hook = &status.webhook;
    let last = status.last_attempt.as_ref().map_or_else(
        || "never posted".to_owned(),
        |attempt| {
            let answer = attempt
                .http_status
                .map_or_else(|| "no answer".to_owned(), |code| format!("HTTP {code}"));
            format!(
                "last {} ({answer}) at {}",
                attempt.outcome,
                format(&attempt.at)
            )
        },
    );
    say!(
        "{}  {}  [{}]  pending={} delivered={} failed={}  {last}",
        hook.id,
        hook.url,
        hook.events,
        status.pending,
        status.delivered,
        status.failed
    );
}
