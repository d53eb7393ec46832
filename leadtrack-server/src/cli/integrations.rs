//! The integration commands.

use super::ProjectListing;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, Subcommand};
use leadtrack_core::integration::{Field, Input, Need, PLATFORMS, Platform};
use leadtrack_core::types::IntegrationKind;

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
