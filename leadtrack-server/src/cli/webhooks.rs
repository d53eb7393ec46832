//! The lead webhook commands.

use super::ProjectListing;
use clap::Subcommand;
use leadtrack_core::webhook::WebhookEvents;
use uuid::Uuid;

/// `webhook ...`: a project's lead webhooks.
#[derive(Debug, Subcommand)]
pub(crate) enum WebhookCommand {
    /// Add a webhook: the events chosen are posted to its URL, signed with its secret.
    Add {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Where events are posted (https:// or http://).
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
