//! The admin commands of projects, API keys and conversion labels.

use super::ProjectListing;
use clap::{Args, Subcommand};
use leadtrack_core::types::ConsentStatus;
use uuid::Uuid;

/// `project ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ProjectCommand {
    /// Create a project and its first API key.
    Create {
        /// A name for people.
        #[arg(long)]
        name: String,
        /// The public project id (default: generated).
        #[arg(long, value_name = "PUBLIC_ID")]
        id: Option<String>,
        /// ISO 4217 currency of lead prices.
        #[arg(long, value_name = "CODE")]
        currency: Option<String>,
        /// Print `{"projectId": ..., "apiKey": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List projects.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Deactivate a project: its routes answer 403 until it is activated again.
    Deactivate {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
    },
    /// Activate a deactivated project.
    Activate {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
    },
    /// Change a project's settings; what is not given stays as it is.
    Set(Box<ProjectSetArgs>),
}

/// `project set`
#[derive(Debug, Args)]
pub(crate) struct ProjectSetArgs {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    pub(crate) project: String,
    /// A new name.
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// ISO 4217 currency of lead prices.
    #[arg(long, value_name = "CODE")]
    pub(crate) currency: Option<String>,
    /// The country or region (two letters, e.g. DE) whose national phone numbers leads
    /// write without an international prefix; "" removes it.
    #[arg(long, value_name = "CODE")]
    pub(crate) region: Option<String>,
    /// Older form of --region: a calling code (e.g. 49), taken as the country that
    /// numbers the code (49: DE, 1: US, 44: GB).
    #[arg(long, value_name = "DIGITS", conflicts_with = "region", hide = true)]
    pub(crate) country_code: Option<String>,
    /// Google's ad_user_data consent of leads that give none: granted, denied, or "" for
    /// unknown. Denied sends Google click ids only.
    #[arg(long, value_name = "CONSENT", value_parser = consent_choice)]
    pub(crate) consent_ad_user_data: Option<ConsentChoice>,
    /// Google's ad_personalization consent of leads that give none: granted, denied, or ""
    /// for unknown.
    #[arg(long, value_name = "CONSENT", value_parser = consent_choice)]
    pub(crate) consent_ad_personalization: Option<ConsentChoice>,
    /// GA4 event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_ga4_event: Option<String>,
    /// Meta event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_meta_event: Option<String>,
    /// Google Ads conversion action for `lost` ("" sends none).
    #[arg(long, value_name = "RESOURCE")]
    pub(crate) lost_google_ads_action: Option<String>,
    /// Microsoft Advertising conversion goal for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_microsoft_ads_conversion: Option<String>,
    /// LinkedIn conversion rule for `lost` ("" sends none).
    #[arg(long, value_name = "URN")]
    pub(crate) lost_linkedin_conversion: Option<String>,
    /// Whether the webhook hears of `lost`.
    #[arg(long, value_name = "BOOL")]
    pub(crate) lost_webhook: Option<bool>,
    /// Browser origins createLead accepts, comma-separated (e.g.
    /// "https://shop.example,https://www.shop.example"); "" accepts any. Requests without
    /// an Origin header (servers, the WordPress plugin) are always accepted.
    #[arg(long, value_name = "ORIGINS")]
    pub(crate) allowed_origins: Option<String>,
    /// How long a rating made in the dashboard waits, undoable, before anything is sent:
    /// whole seconds from 0 to 600 (10 for a new project). API ratings are never held.
    #[arg(long, value_name = "SECONDS")]
    pub(crate) undo_window: Option<u32>,
    /// Whether ratings made in the dashboard's inbox rows are drafts, sent only once
    /// reviewed ("Send ratings"): true or false (false for a new project).
    #[arg(long, value_name = "BOOL")]
    pub(crate) review_ratings: Option<bool>,
    /// Leads an hour the project may hold as spam (20000 for a new project); past it,
    /// createLead answers 429 to what it would hold. Leads that are not spam are never
    /// refused.
    #[arg(long, value_name = "N")]
    pub(crate) held_budget: Option<u32>,
    /// Addresses and networks whose leads are never held for their rate (the site's own
    /// server, its CDN), comma-separated CIDRs ("192.0.2.10,198.51.100.0/24"); "" trusts none.
    #[arg(long, value_name = "CIDRS")]
    pub(crate) trusted_addresses: Option<String>,
    /// Email domains whose leads the domain rules (disposable, blocked) never hold,
    /// comma-separated; "" trusts none.
    #[arg(long, value_name = "DOMAINS")]
    pub(crate) trusted_domains: Option<String>,
    /// Email domains whose leads are spam, comma-separated; "" blocks none.
    #[arg(long, value_name = "DOMAINS")]
    pub(crate) blocked_domains: Option<String>,
    /// Addresses and networks whose leads are spam, comma-separated CIDRs; "" blocks none.
    #[arg(long, value_name = "CIDRS")]
    pub(crate) blocked_addresses: Option<String>,
    /// Words or phrases whose leads are spam, comma-separated; "" blocks none.
    #[arg(long, value_name = "WORDS")]
    pub(crate) blocked_words: Option<String>,
}

/// `key ...`
#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Create an API key (shown once).
    Create {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print `{"apiKey": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List a project's keys (their prefixes).
    List(ProjectListing),
    /// Revoke an API key, named by the whole key or its prefix.
    Revoke {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The key, or its prefix as `key list` shows it.
        #[arg(long, value_name = "KEY_OR_PREFIX")]
        key: String,
    },
}

/// `label ...`
#[derive(Debug, Subcommand)]
pub(crate) enum LabelCommand {
    /// Create a conversion label.
    Create {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// A name for people, e.g. "Qualified".
        #[arg(long)]
        name: String,
        /// Leads processed with this label become `rated` (else they return to `open`).
        #[arg(long)]
        mark_as_done: bool,
        /// GA4 event name to send.
        #[arg(long, value_name = "NAME")]
        ga4_event: Option<String>,
        /// Meta event name to send.
        #[arg(long, value_name = "NAME")]
        meta_event: Option<String>,
        /// Google Ads conversion action (its id or customers/C/conversionActions/ID).
        #[arg(long, value_name = "RESOURCE")]
        google_ads_action: Option<String>,
        /// Microsoft Advertising offline conversion goal name.
        #[arg(long, value_name = "NAME")]
        microsoft_ads_conversion: Option<String>,
        /// LinkedIn conversion rule (its id or urn:lla:llaPartnerConversion:ID).
        #[arg(long, value_name = "URN")]
        linkedin_conversion: Option<String>,
        /// Send to the project's webhook.
        #[arg(long)]
        webhook: bool,
        /// Print `{"labelId": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// List a project's labels, in their order.
    List(ProjectListing),
    /// Rename a label.
    Rename {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The label's id.
        #[arg(long, value_name = "UUID")]
        label: Uuid,
        /// Its new name.
        #[arg(long)]
        name: String,
    },
    /// Archive a label (no longer offered for rating; leads, histories and reports keep
    /// it, and the API still accepts it), or restore it with --restore.
    Archive {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The label's id.
        #[arg(long, value_name = "UUID")]
        label: Uuid,
        /// Restore an archived label.
        #[arg(long)]
        restore: bool,
    },
    /// Delete a label never used (one that was is refused: archive it).
    Delete {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The label's id.
        #[arg(long, value_name = "UUID")]
        label: Uuid,
    },
    /// Put a project's labels in a new order (which sets the number keys): every label's
    /// id once, comma-separated.
    Reorder {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The labels' ids in their new order.
        #[arg(long, value_name = "UUID,...", value_delimiter = ',', required = true)]
        labels: Vec<Uuid>,
    },
}

/// A `--consent-*` value: a signal, or `None` for unknown.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConsentChoice(pub(crate) Option<ConsentStatus>);

/// `--consent-*`: `granted`, `denied`, or blank for unknown.
fn consent_choice(value: &str) -> Result<ConsentChoice, String> {
    match value.trim() {
        "" => Ok(ConsentChoice(None)),
        given => given
            .to_ascii_lowercase()
            .parse()
            .map(|status| ConsentChoice(Some(status)))
            .map_err(|_| format!("{given:?} is not granted, denied or \"\" (unknown)")),
    }
}
