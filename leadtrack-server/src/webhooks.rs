//! `webhook ...`: adding, listing and removing a project's lead webhooks. A running
//! server's worker reads a webhook's settings with every event it posts, so changes apply
//! to the next post.

use chrono::Utc;
use clap::Subcommand;
use leadtrack_core::integration::Secret;
use leadtrack_core::target::Targets;
use leadtrack_core::time::format;
use leadtrack_core::webhook::WebhookEvents;
use leadtrack_core::webhook::{NewWebhook, WebhookKind, WebhookStatus};
use leadtrack_core::{Admin, LeadWebhooks};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::Failure;
use crate::admin::project;
use crate::listing::ProjectListing;

/// `webhook ...`: a project's lead webhooks.
#[derive(Debug, Subcommand)]
pub(crate) enum WebhookCommand {
    /// Add a webhook: the events chosen are posted to its URL, signed with its secret.
    Add {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Where events are posted: an https:// address (docs/protection.md).
        #[arg(long, value_name = "URL")]
        url: String,
        /// The events, separated by commas: lead.created, lead.updated, lead.converted,
        /// lead.lost.
        #[arg(long, value_name = "EVENTS", value_parser = events)]
        events: WebhookEvents,
        /// The signing secret (generated, and shown once, when not given).
        #[arg(
            long,
            env = "LEADTRACK_WEBHOOK_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        secret: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List a project's webhooks and how their deliveries stand (secrets hidden).
    List(ProjectListing),
    /// Remove a webhook, with the events not yet delivered to it.
    Remove {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The webhook's id, as `webhook list` shows it.
        #[arg(value_name = "WEBHOOK_ID")]
        id: Uuid,
    },
}

fn events(list: &str) -> Result<WebhookEvents, String> {
    WebhookEvents::parse_list(list).map_err(|err| err.to_string())
}

/// `webhook ...`: adds, lists or removes.
pub(crate) async fn webhook_command<S: Admin + LeadWebhooks>(
    store: &S,
    command: WebhookCommand,
    targets: &Targets,
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
            let new = NewWebhook::new(&url, targets, secret.map(Secret::new), events)
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
            let mut hooks = store.webhooks(project.id).await.map_err(Failure::store)?;
            // A CRM sync is listed with the integrations.
            hooks.retain(|status| status.webhook.kind.crm().is_none());
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
        "kind": hook.kind.as_ref(),
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
    // REST hooks were subscribed by an automation tool through the API.
    let origin = match hook.kind {
        WebhookKind::RestHook => "  (REST hook)",
        _ => "",
    };
    say!(
        "{}  {}  [{}]{origin}  pending={} delivered={} failed={}  {last}",
        hook.id,
        hook.url,
        hook.events,
        status.pending,
        status.delivered,
        status.failed
    );
}
