//! `integration ...`: connecting, changing and disconnecting a project's integrations.
//!
//! Settings given on the command line replace the stored ones; settings not given are kept,
//! so `--base-url` alone moves an integration without restating its credentials. A running
//! server's worker reads the settings for every job, so changes apply to the next delivery.

use chrono::Utc;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, Subcommand};
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::integration::{
    Field, Input, Integrations, Need, PLATFORMS, Platform, SettingsError, SettingsInput, Shown,
};
use leadtrack_core::project::Project;
use leadtrack_core::target::Targets;
use leadtrack_core::types::IntegrationKind;
use leadtrack_core::webhook::{WebhookKind, WebhookStatus};
use leadtrack_core::{Admin, LeadStore, LeadWebhooks};
use leadtrack_platforms::check::{self, TestRequest, send_test};
use serde_json::{Map, Value};

use crate::Failure;
use crate::admin::{audit, project};
use crate::listing::ProjectListing;
use crate::mail::Links;
use crate::sources;

/// `integration ...`: connect (or change) with the settings given; `--disconnect` removes.
/// Settings already stored are kept unless given again.
#[derive(Debug, Subcommand)]
pub(crate) enum IntegrationCommand {
    /// `integration google-ads|ga4|meta|microsoft-ads|linkedin|webhook`: one per platform,
    /// with a flag per field of core's table.
    #[command(flatten)]
    Connect(ConnectCommand),
    /// Send one test event in the platform's test mode and print its answer: GA4's
    /// validation endpoint, Meta's Test events (a test event code), Google Ads'
    /// validateOnly, or a signed ping to the webhook. Nothing counts as a conversion.
    Test {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The integration: ga4, meta, google-ads, microsoft-ads, linkedin or webhook.
        #[arg(long, value_name = "KIND", value_parser = integration_kind)]
        kind: IntegrationKind,
        /// The event name for GA4 and Meta (default qualify_lead, Lead).
        #[arg(long, value_name = "NAME")]
        event: Option<String>,
        /// Meta's test event code, when the integration has none.
        #[arg(long, value_name = "CODE")]
        test_event_code: Option<String>,
        /// The Google Ads conversion action to validate against (id or resource name).
        #[arg(long, value_name = "RESOURCE")]
        conversion_action: Option<String>,
    },
    /// Show a project's integrations (credentials hidden).
    List(ProjectListing),
    /// Take the leads of the project's Google Ads lead forms: sets the key Google sends
    /// with each (the form's webhook key) and prints the webhook's URL, to paste into the
    /// form's "Lead delivery" settings, as its last line.
    GoogleLeadForms {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The key set on the lead form in Google Ads.
        #[arg(long, value_name = "KEY", required_unless_present = "remove")]
        key: Option<String>,
        /// Stop taking them: the webhook then refuses every post.
        #[arg(long, conflicts_with = "key")]
        remove: bool,
    },
    /// Keep the project's leads in HubSpot: each new lead upserts its contact (one per
    /// email), each rating creates or moves the lead's one deal.
    Hubspot(crate::crm::HubspotArgs),
    /// Keep the project's leads in Pipedrive: each new lead finds or makes its person and
    /// becomes a Pipedrive lead, each rating makes or moves the lead's one deal.
    Pipedrive(crate::crm::PipedriveArgs),
    /// Take the leads of a Facebook page's Instant Forms (Meta Lead Ads): Meta announces
    /// each on the server's webhook (--meta-app-secret, --meta-verify-token), and the lead
    /// is read from the Graph API with the page's token.
    MetaLeadAds {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The Facebook page's id.
        #[arg(long, value_name = "ID", required_unless_present = "remove")]
        page_id: Option<String>,
        /// A page access token with leads_retrieval (a system user's never expires).
        #[arg(long, value_name = "TOKEN", required_unless_present = "remove")]
        page_access_token: Option<String>,
        /// Another Graph API host, e.g. a test server ("" for Meta's).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Stop taking the page's leads.
        #[arg(long, conflicts_with_all = ["page_id", "page_access_token"])]
        remove: bool,
    },
    /// Take the responses of LinkedIn Lead Gen Forms of the given ad accounts, read every
    /// five minutes with the project's LinkedIn integration (whose refresh token needs
    /// the r_marketing_leadgen_automation scope).
    LinkedinLeadGen {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The ad accounts' ids, comma-separated.
        #[arg(
            long,
            value_name = "IDS",
            value_delimiter = ',',
            required_unless_present = "remove"
        )]
        accounts: Vec<String>,
        /// Stop reading them.
        #[arg(long, conflicts_with = "accounts")]
        remove: bool,
    },
}

/// The options every `integration` command shares.
#[derive(Debug, Args)]
pub(crate) struct IntegrationTarget {
    /// The public project id.
    #[arg(long, value_name = "ID")]
    pub(crate) project: String,
    /// The platform's base URL ("" restores the platform's own), e.g. for a test server.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Disconnect the integration.
    #[arg(long)]
    pub(crate) disconnect: bool,
    /// When connecting: leave the labels as they are, instead of having each send here
    /// what the platform recommends (GA4's and Meta's events for it, the webhook).
    #[arg(long, conflicts_with = "disconnect")]
    pub(crate) leave_labels: bool,
}

/// `--kind`: an integration as the commands name it (`google-ads`) or as stored
/// (`google_ads`).
fn integration_kind(value: &str) -> Result<IntegrationKind, String> {
    value
        .trim()
        .to_ascii_lowercase()
        .replace('-', "_")
        .parse()
        .map_err(|_| {
            format!("{value:?} is not ga4, meta, google-ads, microsoft-ads, linkedin or webhook")
        })
}

/// Connecting (or changing) one platform: `integration ga4 --project ID --measurement-id
/// G-X ...`. Its subcommands and their flags are made from core's table of platforms
/// ([`PLATFORMS`]), so a new platform needs no code here.
#[derive(Debug)]
pub(crate) struct ConnectCommand {
    /// The platform.
    pub(crate) kind: IntegrationKind,
    /// The project, `--base-url` and `--disconnect`.
    pub(crate) target: IntegrationTarget,
    /// The settings given, by the table's names.
    pub(crate) given: Vec<(&'static str, String)>,
}

impl ConnectCommand {
    /// The value given for `name`, if any.
    pub(crate) fn given(&self, name: &str) -> Option<String> {
        if name == "base_url" {
            return self.target.base_url.clone();
        }
        self.given
            .iter()
            .find(|(given, _)| *given == name)
            .map(|(_, value)| value.clone())
    }
}

/// A platform's subcommand: the shared options and one flag per field (`base_url` is the
/// shared `--base-url`).
fn platform_command(platform: &'static Platform) -> Command {
    // The shared options' own doc would otherwise stand as the command's about.
    let command =
        IntegrationTarget::augment_args(Command::new(platform.slug)).about(platform.summary);
    platform
        .fields
        .iter()
        .filter(|field| field.name != "base_url")
        .fold(command, |command, field| {
            command.arg(field_arg(platform, field))
        })
}

/// The flag of one field.
fn field_arg(platform: &Platform, field: &'static Field) -> Arg {
    let arg = Arg::new(field.name)
        .long(field.name.replace('_', "-"))
        .value_name(field.value_name)
        .help(flag_help(field))
        .action(ArgAction::Set);
    match field.input {
        Input::Secret => arg.env(platform.env_name(field)).hide_env_values(true),
        Input::Check => arg
            .num_args(0..=1)
            .default_missing_value("true")
            .value_parser(clap::value_parser!(bool)),
        Input::Text | Input::Url => arg,
    }
}

/// A field's help on the command line: its label, its help, and what a blank or missing
/// value does there.
fn flag_help(field: &Field) -> String {
    let mut help = field.label.to_owned();
    if !field.help.is_empty() {
        help = format!("{help}. {}", field.help);
    }
    if !field.how_to_make.is_empty() {
        help = format!("{help} ({})", field.how_to_make);
    }
    let how = match (field.input, field.need) {
        (Input::Check, _) => format!(" (--{} false turns it off)", field.name.replace('_', "-")),
        (_, Need::Default(value)) => format!(" (default {value})"),
        (Input::Text, Need::Optional) => " (\"\" removes it)".to_owned(),
        _ => String::new(),
    };
    help + &how
}

impl FromArgMatches for ConnectCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let (name, matches) = matches
            .subcommand()
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingSubcommand))?;
        let platform = Platform::by_slug(name)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidSubcommand))?;
        let target = IntegrationTarget::from_arg_matches(matches)?;
        let given = platform
            .fields
            .iter()
            .filter(|field| field.name != "base_url")
            .filter_map(|field| {
                let value = match field.input {
                    Input::Check => matches.get_one::<bool>(field.name)?.to_string(),
                    _ => matches.get_one::<String>(field.name)?.clone(),
                };
                Some((field.name, value))
            })
            .collect();
        Ok(Self {
            kind: platform.kind,
            target,
            given,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for ConnectCommand {
    fn augment_subcommands(command: Command) -> Command {
        PLATFORMS.iter().fold(command, |command, platform| {
            command.subcommand(platform_command(platform))
        })
    }

    fn augment_subcommands_for_update(command: Command) -> Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        Platform::by_slug(name).is_some()
    }
}

/// `integration ...`: connects, changes, disconnects or lists.
pub(crate) async fn integration_command<S: Admin + LeadStore + LeadWebhooks>(
    store: &S,
    command: IntegrationCommand,
    (links, targets): (&Links, &Targets),
) -> Result<(), Failure> {
    let connect = match command {
        IntegrationCommand::MetaLeadAds {
            project: id,
            page_id,
            page_access_token,
            base_url,
            remove: _,
        } => {
            let project = project(store, &id).await?;
            let page = page_id.zip(page_access_token);
            let base_url = match base_url.filter(|url| !url.trim().is_empty()) {
                Some(url) => {
                    Some(String::from(targets.check(&url).map_err(|refusal| {
                        Failure(format!("--base-url: {refusal}"))
                    })?))
                }
                None => None,
            };
            return sources::meta_lead_ads(store, &project, (page, base_url), links).await;
        }
        IntegrationCommand::LinkedinLeadGen {
            project: id,
            accounts,
            remove: _,
        } => {
            let project = project(store, &id).await?;
            return sources::linkedin_lead_gen(store, &project, accounts).await;
        }
        IntegrationCommand::GoogleLeadForms {
            project: id,
            key,
            remove: _,
        } => {
            let project = project(store, &id).await?;
            return sources::google_lead_forms(store, &project, key, links).await;
        }
        IntegrationCommand::Hubspot(args) => {
            return crate::crm::crm_command(store, args.split(), targets).await;
        }
        IntegrationCommand::Pipedrive(args) => {
            return crate::crm::crm_command(store, args.split(), targets).await;
        }
        IntegrationCommand::Connect(connect) => connect,
        IntegrationCommand::Test {
            project: id,
            kind,
            event,
            test_event_code,
            conversion_action,
        } => {
            let project = project(store, &id).await?;
            let request = TestRequest {
                event,
                test_event_code,
                conversion_action,
            };
            return test(store, (&project, targets), kind, &request).await;
        }
        IntegrationCommand::List(ProjectListing { project: id, json }) => {
            let project = project(store, &id).await?;
            let integrations = store
                .integrations(project.id)
                .await
                .map_err(Failure::store)?;
            let mut crms = Vec::new();
            for kind in [WebhookKind::Hubspot, WebhookKind::Pipedrive] {
                crms.push((kind, crate::crm::sync_of(store, &project, kind).await?));
            }
            print_integrations(&integrations, &crms, json);
            return Ok(());
        }
    };
    connect_command(store, connect, targets).await
}

/// `integration PLATFORM ...`: connects, changes or disconnects one platform.
async fn connect_command<S: Admin + LeadStore>(
    store: &S,
    command: ConnectCommand,
    targets: &Targets,
) -> Result<(), Failure> {
    let kind = command.kind;
    let project = project(store, &command.target.project).await?;
    if command.target.disconnect {
        let removed = store
            .remove_integration(project.id, kind)
            .await
            .map_err(Failure::store)?;
        if removed {
            let event = ProjectActivity::IntegrationRemoved { integration: kind };
            audit(store, project.id, event).await?;
            say!("Disconnected {kind} from project {}.", project.public_id);
        } else {
            say!("{kind} was not connected to project {}.", project.public_id);
        }
        return Ok(());
    }
    let current = store
        .integrations(project.id)
        .await
        .map_err(Failure::store)?;
    let input = SettingsInput::from_given(kind, |name| command.given(name));
    let applied = input.apply(&current, targets).map_err(failure)?;
    store
        .set_integration(project.id, applied.settings, Utc::now())
        .await
        .map_err(Failure::store)?;
    let event = ProjectActivity::IntegrationSaved { integration: kind };
    audit(store, project.id, event).await?;
    let verb = if current.is_connected(kind) {
        "Updated"
    } else {
        "Connected"
    };
    say!("{verb} {kind} for project {}.", project.public_id);
    if !current.is_connected(kind) && !command.target.leave_labels {
        let sent = leadtrack_core::store::connect::send_labels_to(store, project.id, kind)
            .await
            .map_err(Failure::store)?;
        if !sent.is_empty() {
            say!("Labels now sending to {kind}: {}.", sent.join(", "));
        }
    }
    if let Some(secret) = applied.generated_secret {
        say!(
            "Webhook signing secret (shown only this once): {}",
            secret.expose()
        );
    }
    Ok(())
}

/// `integration test`: one test event, and what the platform answered. Fails (exit 1)
/// when the platform did not accept it.
async fn test<S: Admin>(
    store: &S,
    (project, targets): (&Project, &Targets),
    kind: IntegrationKind,
    request: &TestRequest,
) -> Result<(), Failure> {
    let integrations = store
        .integrations(project.id)
        .await
        .map_err(Failure::store)?;
    let http = check::client(targets.clone());
    let answer = send_test(&http, project, &integrations, kind, request)
        .await
        .map_err(|err| Failure(format!("{err}; nothing was sent")))?;
    let status = answer
        .status
        .map_or_else(|| "no answer".to_owned(), |status| format!("HTTP {status}"));
    if answer.accepted {
        say!(
            "{kind} accepted the test event ({status}): {}",
            answer.detail
        );
        Ok(())
    } else {
        Err(Failure(format!(
            "{kind} did not accept the test event ({status}): {}",
            answer.detail
        )))
    }
}

/// A settings error in the command line's words: a missing setting is named by its option.
fn failure(err: SettingsError) -> Failure {
    match err {
        SettingsError::Missing {
            setting,
            integration,
        } => Failure(format!(
            "--{} is needed to connect {integration}",
            setting.replace('_', "-")
        )),
        other => Failure(other.to_string()),
    }
}

/// What is shown of a project's integrations: everything but the credentials, by the
/// settings' stored names (`customerId`), `null` where unset.
fn describe(integrations: &Integrations) -> Value {
    let described: Map<String, Value> = PLATFORMS
        .iter()
        .map(|platform| {
            let shown = integrations.shown(platform.kind).map(|fields| {
                let fields: Map<String, Value> = fields
                    .into_iter()
                    .map(|(field, shown)| {
                        let value = match shown {
                            Shown::Text(text) => text.map_or(Value::Null, Value::from),
                            Shown::Check(on) => Value::from(on),
                        };
                        (field.camel_name(), value)
                    })
                    .collect();
                Value::Object(fields)
            });
            (camel(platform.slug), shown.unwrap_or(Value::Null))
        })
        .collect();
    Value::Object(described)
}

/// A platform's key in `integration list --json` (`googleAds`).
fn camel(slug: &str) -> String {
    let mut parts = slug.split('-');
    let first = parts.next().unwrap_or_default().to_owned();
    parts.fold(first, |mut out, part| {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            out.push_str(chars.as_str());
        }
        out
    })
}

fn print_integrations(
    integrations: &Integrations,
    crms: &[(WebhookKind, Option<WebhookStatus>)],
    json: bool,
) {
    let mut described = describe(integrations);
    for (kind, sync) in crms {
        let name = kind.as_ref();
        let options = sync
            .as_ref()
            .map(|sync| sync.webhook.crm.clone().unwrap_or_default());
        if json {
            described[name] = options.map_or(Value::Null, |options| {
                serde_json::json!({"pipeline": options.pipeline, "stages": options.stages})
            });
            continue;
        }
        match (sync, options) {
            (Some(sync), Some(options)) => say!(
                "{name:<11} connected   {}; {} synced, {} waiting, {} failed",
                leadtrack_platforms::crm::describe(*kind, &options),
                sync.delivered,
                sync.pending,
                sync.failed
            ),
            _ => say!("{name:<11} not connected"),
        }
    }
    if json {
        say!("{described}");
        return;
    }
    for platform in &PLATFORMS {
        let name = platform.slug;
        match described[camel(name)].as_object() {
            None => say!("{name:<11} not connected"),
            Some(fields) => {
                let shown: Vec<String> = fields
                    .iter()
                    .filter(|(_, value)| !value.is_null())
                    .map(|(field, value)| {
                        format!(
                            "{field}={}",
                            value
                                .as_str()
                                .map_or_else(|| value.to_string(), str::to_owned)
                        )
                    })
                    .collect();
                say!("{name:<11} connected   {}", shown.join(" "));
            }
        }
    }
}
