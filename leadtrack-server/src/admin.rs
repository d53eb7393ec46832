//! `project ...`, `key ...` and `label ...`: the administration commands. They open the
//! database directly, so they work while a server runs on it: a new key, a revocation or a
//! deactivation takes effect at once. They are generic over the store, as every backend
//! offers the same administration.

use chrono::Utc;
use clap::{Args, Subcommand};
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::integration::Platform;
use leadtrack_core::key::KeyRef;
use leadtrack_core::label::{LabelMapping, NewLabel, rateable};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::spam::{self, SpamRulesInput};
use leadtrack_core::spend::FxRates;
use leadtrack_core::store::Entity;
use leadtrack_core::types::{Consent, ConsentStatus, IntegrationKind, ProjectId};
use leadtrack_core::{Admin, LeadStore, Spending, StoreError};
use leadtrack_platforms::normalize::region_of_calling_code;
use serde_json::json;
use uuid::Uuid;

use crate::Failure;
use crate::listing::ProjectListing;

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
    /// A rate ad spend in another currency is converted with, as CUR=RATE: how many units
    /// of the project's currency one unit is worth (EUR=1.08). Repeat for more; they
    /// replace the rates set before, and "" removes them all.
    #[arg(long = "fx", value_name = "CUR=RATE")]
    pub(crate) fx: Vec<String>,
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
    /// TikTok event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_tiktok_event: Option<String>,
    /// Reddit event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_reddit_event: Option<String>,
    /// Pinterest event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_pinterest_event: Option<String>,
    /// Snapchat event sent for `lost` ("" sends none).
    #[arg(long, value_name = "NAME")]
    pub(crate) lost_snapchat_event: Option<String>,
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
    /// How long leads are kept: whole days from 1 to 36500, after which the worker erases
    /// them once a day as a person's erasure does (docs/privacy.md); "" keeps them for
    /// ever (the default).
    #[arg(long, value_name = "DAYS")]
    pub(crate) retention_days: Option<String>,
    /// How long spam is kept before it is deleted: whole days from 1 to 36500 (30 for a
    /// new project).
    #[arg(long, value_name = "DAYS")]
    pub(crate) spam_retention_days: Option<u32>,
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

/// `label create`: a label's name, what rating with it does, and what it sends where.
#[derive(Debug, clap::Args)]
pub(crate) struct LabelCreate {
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
    /// TikTok event name to send: a stage of your CRM funnel, mapped to a standard
    /// event in TikTok's Events Manager.
    #[arg(long, value_name = "NAME")]
    tiktok_event: Option<String>,
    /// Reddit event name to send: Lead, SignUp, Purchase, AddToCart, ViewContent, or a
    /// custom event's name.
    #[arg(long, value_name = "NAME")]
    reddit_event: Option<String>,
    /// Pinterest event name to send, one of Pinterest's (lead, checkout, signup,
    /// custom, ...).
    #[arg(long, value_name = "NAME")]
    pinterest_event: Option<String>,
    /// Snapchat event name to send (e.g. PURCHASE, SIGN_UP).
    #[arg(long, value_name = "NAME")]
    snapchat_event: Option<String>,
    /// Send to the project's webhook.
    #[arg(long)]
    webhook: bool,
    /// Print `{"labelId": ...}`.
    #[arg(long)]
    json: bool,
}

/// `label ...`
#[derive(Debug, Subcommand)]
pub(crate) enum LabelCommand {
    /// Create a conversion label.
    Create(Box<LabelCreate>),
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

/// The project named by a `--project` argument.
pub(crate) async fn project<S: Admin>(store: &S, public_id: &str) -> Result<Project, Failure> {
    store.project(public_id).await.map_err(|err| match err {
        StoreError::NotFound(Entity::Project) => Failure(format!(
            "no project with id {public_id:?}; `server project list` shows the projects"
        )),
        other => Failure::store(other),
    })
}

/// Records what an admin command did to `project` in its audit log, by "the admin
/// commands", from no address.
pub(crate) async fn audit<S: LeadStore>(
    store: &S,
    project: ProjectId,
    activity: ProjectActivity,
) -> Result<(), Failure> {
    store
        .record_project_event(project, &Attribution::admin(), &activity, Utc::now())
        .await
        .map_err(Failure::store)
}

/// Prints `value` as one line of JSON.
pub(crate) fn print_json(value: &serde_json::Value) {
    say!("{value}");
}

/// `project ...`
pub(crate) async fn project_command<S: Admin + LeadStore + Spending>(
    store: &S,
    command: ProjectCommand,
) -> Result<(), Failure> {
    match command {
        ProjectCommand::Create {
            name,
            id,
            currency,
            json,
        } => {
            let (project, key) = create_project(store, name, id, currency).await?;
            if json {
                print_json(&json!({"projectId": project.public_id, "apiKey": key}));
            } else {
                say!("Created project {:?}", project.name);
                say!("  project id: {}", project.public_id);
                say!("  currency:   {}", project.currency);
                say!("  API key:    {key}");
                say!("The key is shown only this once: store it somewhere safe.");
            }
        }
        ProjectCommand::List { json } => list_projects(store, json).await?,
        ProjectCommand::Deactivate { project: id } => {
            let project = project(store, &id).await?;
            store
                .set_project_active(project.id, false)
                .await
                .map_err(Failure::store)?;
            say!("Deactivated project {id}: its routes now answer 403 project_inactive.");
        }
        ProjectCommand::Activate { project: id } => {
            let project = project(store, &id).await?;
            store
                .set_project_active(project.id, true)
                .await
                .map_err(Failure::store)?;
            say!("Activated project {id}.");
        }
        ProjectCommand::Set(args) => set_project(store, *args).await?,
    }
    Ok(())
}

/// `project set --fx`: replaces the project's currency rates (`""` alone removes them).
async fn set_rates<S: LeadStore + Spending>(
    store: &S,
    project: &Project,
    given: &[String],
) -> Result<(), Failure> {
    let pairs = given
        .iter()
        .map(|pair| pair.trim())
        .filter(|pair| !pair.is_empty());
    let rates = FxRates::parse(pairs).map_err(Failure)?;
    store
        .set_fx_rates(project.id, &rates)
        .await
        .map_err(Failure::store)?;
    let written = rates.written();
    audit(
        store,
        project.id,
        ProjectActivity::FxRatesSet {
            rates: written.clone(),
        },
    )
    .await?;
    match written.is_empty() {
        true => say!("Project {}: no currency rates.", project.public_id),
        false => say!(
            "Project {}: spend converted to {} at {written}.",
            project.public_id,
            project.currency
        ),
    }
    Ok(())
}

/// `project list`
async fn list_projects<S: Admin>(store: &S, json: bool) -> Result<(), Failure> {
    let projects = store.projects().await.map_err(Failure::store)?;
    if json {
        let list: Vec<_> = projects
            .iter()
            .map(|p| {
                json!({
                    "projectId": p.public_id,
                    "name": p.name,
                    "active": p.active,
                    "currency": p.currency,
                    "region": p.region,
                    "defaultConsent": p.default_consent,
                    "allowedOrigins": p.allowed_origins,
                    "undoWindowSeconds": p.undo_window_seconds,
                    "reviewRatings": p.review_ratings,
                    "retentionDays": p.retention.days,
                    "spamRetentionDays": p.retention.spam_days,
                    "heldBudget": p.spam_rules.held_budget,
                    "trustedAddresses": spam::networks_text(&p.spam_rules.trusted_addresses)
                        .lines().collect::<Vec<_>>(),
                    "createdAt": leadtrack_core::time::format(&p.created_at),
                })
            })
            .collect();
        print_json(&json!(list));
    } else if projects.is_empty() {
        say!("No projects yet: `server project create --name NAME` creates one.");
    } else {
        say!(
            "{:<24} {:<8} {:<8} NAME",
            "PROJECT ID",
            "ACTIVE",
            "CURRENCY"
        );
        for p in projects {
            let active = if p.active { "yes" } else { "no" };
            say!(
                "{:<24} {:<8} {:<8} {}",
                p.public_id,
                active,
                p.currency,
                p.name
            );
        }
    }
    Ok(())
}

/// `project set`
async fn set_project<S: Admin + LeadStore + Spending>(
    store: &S,
    args: ProjectSetArgs,
) -> Result<(), Failure> {
    let project = project(store, &args.project).await?;
    if !args.fx.is_empty() {
        set_rates(store, &project, &args.fx).await?;
    }
    let region = region_setting(args.region.clone(), args.country_code.clone())?;
    let spam = SpamRulesInput {
        held_budget: args.held_budget,
        trusted_addresses: args.trusted_addresses.clone(),
        trusted_domains: args.trusted_domains.clone(),
        blocked_domains: args.blocked_domains.clone(),
        blocked_addresses: args.blocked_addresses.clone(),
        blocked_words: args.blocked_words.clone(),
    };
    let spam_rules = spam.apply(&project.spam_rules).map_err(Failure)?;
    let settings = ProjectSettings {
        lost_mapping: lost_mapping_setting(&project, &args),
        default_consent: consent_setting(&project, &args),
        region: region.map(blank_is_none),
        allowed_origins: args.allowed_origins.as_deref().map(origin_list),
        name: args.name,
        currency: args.currency,
        undo_window_seconds: args.undo_window,
        spam_rules,
        review_ratings: args.review_ratings,
        retention_days: args
            .retention_days
            .as_deref()
            .map(retention_days)
            .transpose()?,
        spam_retention_days: args.spam_retention_days,
    };
    let updated = store
        .update_project(project.id, settings)
        .await
        .map_err(Failure::store)?;
    let origins = if updated.allowed_origins.is_empty() {
        "any".to_owned()
    } else {
        updated.allowed_origins.join(", ")
    };
    let rules = &updated.spam_rules;
    let trusted = match rules.trusted_addresses.is_empty() {
        true => "none".to_owned(),
        false => spam::networks_text(&rules.trusted_addresses).replace('\n', ", "),
    };
    say!(
        "Project {}: name {:?}, currency {}, phone region {}, default consent {}, lost sends {}, browser origins {}, undo window {} s, review before sending {}, leads kept {}, spam kept {} days, held budget {} an hour, trusted addresses {}.",
        updated.public_id,
        updated.name,
        updated.currency,
        updated.region.as_deref().unwrap_or("none"),
        describe_consent(updated.default_consent),
        describe(&updated.lost_mapping),
        origins,
        updated.undo_window_seconds,
        if updated.review_ratings { "on" } else { "off" },
        updated
            .retention
            .days
            .map_or_else(|| "for ever".to_owned(), |days| format!("{days} days")),
        updated.retention.spam_days,
        rules.held_budget,
        trusted
    );
    Ok(())
}

/// `--retention-days` as given: blank keeps leads for ever.
fn retention_days(days: &str) -> Result<Option<u32>, Failure> {
    match days.trim() {
        "" => Ok(None),
        days => days.parse().map(Some).map_err(|_| {
            Failure("--retention-days is whole days from 1 to 36500, or \"\"".to_owned())
        }),
    }
}

/// A setting as given, `None` when blank (which clears it).
fn blank_is_none(value: String) -> Option<String> {
    Some(value.trim().to_owned()).filter(|v| !v.is_empty())
}

/// The new mapping of `lost`, when any `--lost-...` flag is given: the project's own with
/// those changed.
fn lost_mapping_setting(project: &Project, args: &ProjectSetArgs) -> Option<LabelMapping> {
    let changed = args.lost_ga4_event.is_some()
        || args.lost_meta_event.is_some()
        || args.lost_google_ads_action.is_some()
        || args.lost_microsoft_ads_conversion.is_some()
        || args.lost_linkedin_conversion.is_some()
        || args.lost_tiktok_event.is_some()
        || args.lost_reddit_event.is_some()
        || args.lost_pinterest_event.is_some()
        || args.lost_snapchat_event.is_some()
        || args.lost_webhook.is_some();
    if !changed {
        return None;
    }
    let mut lost = project.lost_mapping.clone();
    let set = |field: &mut Option<String>, given: &Option<String>| {
        if let Some(value) = given {
            *field = blank_is_none(value.clone());
        }
    };
    set(&mut lost.ga4_event, &args.lost_ga4_event);
    set(&mut lost.meta_event, &args.lost_meta_event);
    set(&mut lost.google_ads_action, &args.lost_google_ads_action);
    set(
        &mut lost.microsoft_ads_conversion,
        &args.lost_microsoft_ads_conversion,
    );
    set(
        &mut lost.linkedin_conversion,
        &args.lost_linkedin_conversion,
    );
    set(&mut lost.tiktok_event, &args.lost_tiktok_event);
    set(&mut lost.reddit_event, &args.lost_reddit_event);
    set(&mut lost.pinterest_event, &args.lost_pinterest_event);
    set(&mut lost.snapchat_event, &args.lost_snapchat_event);
    if let Some(webhook) = args.lost_webhook {
        lost.webhook = webhook;
    }
    Some(lost)
}

/// The phone region `--region` or `--country-code` names (a blank one clears it).
fn region_setting(
    region: Option<String>,
    country_code: Option<String>,
) -> Result<Option<String>, Failure> {
    Ok(match (region, country_code) {
        (Some(region), _) => Some(region),
        (None, Some(code)) if code.trim().is_empty() => Some(code),
        (None, Some(code)) => match region_of_calling_code(&code) {
            Some(region) => Some(region.to_owned()),
            None => {
                return Err(Failure(format!(
                    "{code:?} is not a country calling code; give --region with the country's two letters, such as DE"
                )));
            }
        },
        (None, None) => None,
    })
}

/// The new default consent, when a `--consent-...` flag is given: the project's own with
/// that signal changed.
fn consent_setting(project: &Project, args: &ProjectSetArgs) -> Option<Consent> {
    let given = args.consent_ad_user_data.is_some() || args.consent_ad_personalization.is_some();
    let current = project.default_consent;
    given.then(|| Consent {
        ad_user_data: args
            .consent_ad_user_data
            .map_or(current.ad_user_data, |choice| choice.0),
        ad_personalization: args
            .consent_ad_personalization
            .map_or(current.ad_personalization, |choice| choice.0),
    })
}

/// A consent for people: `ad user data granted, ad personalization unknown`.
fn describe_consent(consent: Consent) -> String {
    let signal = |s: Option<ConsentStatus>| s.map_or("unknown".to_owned(), |s| s.to_string());
    format!(
        "ad user data {}, ad personalization {}",
        signal(consent.ad_user_data),
        signal(consent.ad_personalization)
    )
}

/// `--allowed-origins`: comma-separated, blanks dropped ("" is the empty list, any origin).
fn origin_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|origin| !origin.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Creates a project and its first key.
pub(crate) async fn create_project<S: Admin>(
    store: &S,
    name: String,
    public_id: Option<String>,
    currency: Option<String>,
) -> Result<(Project, String), Failure> {
    let project = store
        .create_project(
            NewProject {
                public_id,
                name,
                currency,
            },
            Utc::now(),
        )
        .await
        .map_err(Failure::store)?;
    let key = store
        .issue_api_key(project.id, Utc::now())
        .await
        .map_err(Failure::store)?;
    Ok((project, key.key))
}

/// `key ...`
pub(crate) async fn key_command<S: Admin>(store: &S, command: KeyCommand) -> Result<(), Failure> {
    match command {
        KeyCommand::Create { project: id, json } => {
            let project = project(store, &id).await?;
            let key = store
                .issue_api_key(project.id, Utc::now())
                .await
                .map_err(Failure::store)?;
            if json {
                print_json(&json!({"apiKey": key.key}));
            } else {
                say!("Created an API key for project {id}:");
                say!("  {}", key.key);
                say!("It is shown only this once: store it somewhere safe.");
            }
        }
        KeyCommand::List(ProjectListing { project: id, json }) => {
            let project = project(store, &id).await?;
            let keys = store.api_keys(project.id).await.map_err(Failure::store)?;
            let fmt = |t: &chrono::DateTime<Utc>| leadtrack_core::time::format(t);
            if json {
                let list: Vec<_> = keys
                    .iter()
                    .map(|k| {
                        json!({
                            "prefix": k.prefix,
                            "createdAt": fmt(&k.created_at),
                            "revokedAt": k.revoked_at.as_ref().map(fmt),
                        })
                    })
                    .collect();
                print_json(&json!(list));
            } else {
                say!("{:<14} {:<26} REVOKED", "PREFIX", "CREATED");
                for k in keys {
                    let revoked = k.revoked_at.as_ref().map_or("-".to_owned(), fmt);
                    say!("{:<14} {:<26} {revoked}", k.prefix, fmt(&k.created_at));
                }
            }
        }
        KeyCommand::Revoke { project: id, key } => {
            let project = project(store, &id).await?;
            let revoked = store
                .revoke_api_key(project.id, &KeyRef::parse(&key), Utc::now())
                .await
                .map_err(Failure::store)?;
            say!(
                "Revoked key {} of project {id}: it is refused from now on.",
                revoked.prefix
            );
        }
    }
    Ok(())
}

/// `label ...`
pub(crate) async fn label_command<S: Admin>(
    store: &S,
    command: LabelCommand,
) -> Result<(), Failure> {
    match command {
        LabelCommand::Create(create) => create_label(store, *create).await?,
        LabelCommand::List(listing) => list_labels(store, listing).await?,
        LabelCommand::Rename {
            project: id,
            label,
            name,
        } => {
            let project = project(store, &id).await?;
            let current = store
                .label(project.id, label)
                .await
                .map_err(Failure::store)?;
            let renamed = NewLabel {
                name,
                mark_as_done: current.mark_as_done,
                mapping: current.mapping,
            };
            let label = store
                .update_label(project.id, label, renamed)
                .await
                .map_err(Failure::store)?;
            say!("Renamed label {} to {:?}.", label.id, label.name);
        }
        LabelCommand::Archive {
            project: id,
            label,
            restore,
        } => {
            let project = project(store, &id).await?;
            let label = store
                .set_label_archived(project.id, label, !restore)
                .await
                .map_err(Failure::store)?;
            if restore {
                say!("Restored label {:?}: offered for rating again.", label.name);
            } else {
                say!(
                    "Archived label {:?}: no longer offered for rating.",
                    label.name
                );
            }
        }
        LabelCommand::Delete { project: id, label } => {
            let project = project(store, &id).await?;
            store
                .delete_label(project.id, label)
                .await
                .map_err(Failure::store)?;
            say!("Deleted label {label}.");
        }
        LabelCommand::Reorder {
            project: id,
            labels,
        } => {
            let project = project(store, &id).await?;
            let ordered = store
                .reorder_labels(project.id, &labels)
                .await
                .map_err(Failure::store)?;
            let keyed: Vec<_> = rateable(&ordered)
                .take(9)
                .zip(1..)
                .map(|(label, key)| format!("{key} {}", label.name))
                .collect();
            say!("New order saved. Keys: {}.", keyed.join(", "));
        }
    }
    Ok(())
}

/// `label create`: a new label with its mapping, and how to rate a lead with it.
async fn create_label<S: Admin>(store: &S, create: LabelCreate) -> Result<(), Failure> {
    let LabelCreate {
        project: id,
        name,
        mark_as_done,
        ga4_event,
        meta_event,
        google_ads_action,
        microsoft_ads_conversion,
        linkedin_conversion,
        tiktok_event,
        reddit_event,
        pinterest_event,
        snapchat_event,
        webhook,
        json,
    } = create;
    let project = project(store, &id).await?;
    let mapping = LabelMapping {
        ga4_event,
        meta_event,
        google_ads_action,
        microsoft_ads_conversion,
        linkedin_conversion,
        tiktok_event,
        reddit_event,
        pinterest_event,
        snapchat_event,
        webhook,
    };
    let label = store
        .create_label(
            project.id,
            NewLabel {
                name,
                mark_as_done,
                mapping,
            },
            Utc::now(),
        )
        .await
        .map_err(Failure::store)?;
    if json {
        print_json(&json!({"labelId": label.id}));
    } else {
        say!("Created label {:?} in project {id}", label.name);
        say!("  label id: {}", label.id);
        say!(
            "Rate a lead with it: updateLeadStatus with \"conversionId\": \"{}\"",
            label.id
        );
    }
    Ok(())
}

/// `label list`: the project's labels, with what each sends.
async fn list_labels<S: Admin>(store: &S, listing: ProjectListing) -> Result<(), Failure> {
    let ProjectListing { project: id, json } = listing;
    let project = project(store, &id).await?;
    let labels = store.labels(project.id).await.map_err(Failure::store)?;
    if json {
        let list: Vec<_> = labels
            .iter()
            .map(|l| {
                let mut entry = json!({
                    "labelId": l.id,
                    "name": l.name,
                    "markAsDone": l.mark_as_done,
                    "archived": l.archived,
                });
                entry["mapping"] = json!(l.mapping);
                entry
            })
            .collect();
        print_json(&json!(list));
    } else {
        say!("{:<38} {:<6} {:<40} NAME", "LABEL ID", "DONE", "SENDS");
        for l in labels {
            let done = if l.mark_as_done { "yes" } else { "no" };
            let archived = if l.archived { " (archived)" } else { "" };
            say!(
                "{:<38} {done:<6} {:<40} {}{archived}",
                l.id,
                describe(&l.mapping),
                l.name
            );
        }
    }
    Ok(())
}

/// A mapping in a few words: `ga4:qualify meta:Lead webhook`.
fn describe(mapping: &LabelMapping) -> String {
    use IntegrationKind::*;
    let named = [
        Ga4,
        Meta,
        GoogleAds,
        MicrosoftAds,
        Linkedin,
        Tiktok,
        Reddit,
        Pinterest,
        Snapchat,
    ]
    .into_iter()
    .filter_map(|kind| {
        let name = mapping.named(kind)?;
        Some(format!("{}:{name}", Platform::of(kind).slug))
    });
    let webhook = mapping.webhook.then(|| "webhook".to_owned());
    let parts: Vec<String> = named.chain(webhook).collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `label list` names what a label sends, platform by platform, by the platforms'
    /// command-line names.
    #[test]
    fn a_mapping_is_described_in_a_few_words() {
        let mapping = LabelMapping {
            ga4_event: Some("qualify_lead".into()),
            google_ads_action: Some("555".into()),
            microsoft_ads_conversion: Some("Offline purchase".into()),
            tiktok_event: Some("Won".into()),
            snapchat_event: Some("PURCHASE".into()),
            webhook: true,
            ..LabelMapping::default()
        };
        assert_eq!(
            describe(&mapping),
            "ga4:qualify_lead google-ads:555 microsoft-ads:Offline purchase tiktok:Won \
             snapchat:PURCHASE webhook"
        );
        assert_eq!(describe(&LabelMapping::default()), "-");
    }
}
