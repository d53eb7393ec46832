//! The integration commands.

use clap::{Args, Subcommand};
use leadtrack_core::types::IntegrationKind;

/// `integration ...`: connect (or change) with the settings given; `--disconnect` removes.
/// Settings already stored are kept unless given again.
#[derive(Debug, Subcommand)]
pub(crate) enum IntegrationCommand {
    /// Google Analytics 4, Measurement Protocol.
    Ga4 {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The web stream's measurement id, G-XXXXXXX.
        #[arg(long, value_name = "ID")]
        measurement_id: Option<String>,
        /// A Measurement Protocol API secret of the stream.
        #[arg(
            long,
            env = "LEADTRACK_GA4_API_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        api_secret: Option<String>,
        /// Send to the validation endpoint and fail on its messages (`--validate false` stops).
        #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
        validate: Option<bool>,
    },
    /// Meta Conversions API.
    Meta {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The pixel (dataset) id.
        #[arg(long, value_name = "ID")]
        pixel_id: Option<String>,
        /// A system-user access token.
        #[arg(
            long,
            env = "LEADTRACK_META_ACCESS_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        access_token: Option<String>,
        /// Graph API version (default v23.0).
        #[arg(long, value_name = "VERSION")]
        api_version: Option<String>,
        /// Send to the Test Events tool with this code ("" stops).
        #[arg(long, value_name = "CODE")]
        test_event_code: Option<String>,
        /// Where leads become customers, as Meta's action_source: other (the default),
        /// website, phone_call, physical_store, email, chat or system_generated.
        #[arg(long, value_name = "SOURCE")]
        action_source: Option<String>,
    },
    /// Google Ads offline click conversions, through the Data Manager API.
    GoogleAds {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The Google Ads customer id the conversions belong to.
        #[arg(long, value_name = "ID")]
        customer_id: Option<String>,
        /// The manager account the credentials act through ("" removes it).
        #[arg(long, value_name = "ID")]
        login_customer_id: Option<String>,
        /// OAuth client id.
        #[arg(long, value_name = "ID")]
        client_id: Option<String>,
        /// OAuth client secret.
        #[arg(
            long,
            env = "LEADTRACK_GOOGLE_ADS_CLIENT_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        client_secret: Option<String>,
        /// OAuth refresh token with the datamanager scope.
        #[arg(
            long,
            env = "LEADTRACK_GOOGLE_ADS_REFRESH_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        refresh_token: Option<String>,
        /// The OAuth token endpoint ("" restores Google's).
        #[arg(long, value_name = "URL")]
        token_url: Option<String>,
    },
    /// Microsoft Advertising offline conversions (Campaign Management API v13).
    MicrosoftAds {
        #[command(flatten)]
        target: IntegrationTarget,
        /// The manager account's customer id (CustomerId).
        #[arg(long, value_name = "ID")]
        customer_id: Option<String>,
        /// The ad account's id (CustomerAccountId).
        #[arg(long, value_name = "ID")]
        account_id: Option<String>,
        /// The developer token.
        #[arg(
            long,
            env = "LEADTRACK_MICROSOFT_ADS_DEVELOPER_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        developer_token: Option<String>,
        /// OAuth client id (Microsoft identity platform).
        #[arg(long, value_name = "ID")]
        client_id: Option<String>,
        /// OAuth client secret, for a web application (none for a public one).
        #[arg(
            long,
            env = "LEADTRACK_MICROSOFT_ADS_CLIENT_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        client_secret: Option<String>,
        /// OAuth refresh token with the msads.manage scope.
        #[arg(
            long,
            env = "LEADTRACK_MICROSOFT_ADS_REFRESH_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        refresh_token: Option<String>,
        /// The OAuth token endpoint ("" restores Microsoft's).
        #[arg(long, value_name = "URL")]
        token_url: Option<String>,
    },
    /// LinkedIn Conversions API.
    Linkedin {
        #[command(flatten)]
        target: IntegrationTarget,
        /// OAuth client id.
        #[arg(long, value_name = "ID")]
        client_id: Option<String>,
        /// OAuth client secret.
        #[arg(
            long,
            env = "LEADTRACK_LINKEDIN_CLIENT_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        client_secret: Option<String>,
        /// OAuth refresh token with the rw_conversions scope.
        #[arg(
            long,
            env = "LEADTRACK_LINKEDIN_REFRESH_TOKEN",
            hide_env_values = true,
            value_name = "TOKEN"
        )]
        refresh_token: Option<String>,
        /// API version, YYYYMM (default 202510).
        #[arg(long, value_name = "VERSION")]
        api_version: Option<String>,
        /// The OAuth token endpoint ("" restores LinkedIn's).
        #[arg(long, value_name = "URL")]
        token_url: Option<String>,
    },
    /// A signed JSON webhook.
    Webhook {
        #[command(flatten)]
        target: IntegrationTarget,
        /// Where events are posted.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// The signing secret (generated, and shown once, when connecting without one).
        #[arg(
            long,
            env = "LEADTRACK_WEBHOOK_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        secret: Option<String>,
    },
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
    List {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
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
