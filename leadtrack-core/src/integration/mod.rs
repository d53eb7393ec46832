//! Integration settings: the credentials and options of each platform a project forwards
//! conversions to, each platform's fields described once ([`PLATFORMS`]), and the rules for
//! settings as a person gives them ([`SettingsInput`]), which the command line and the
//! dashboard share. Credentials are [`Secret`]s that never print.

use std::fmt;

use serde::{Deserialize, Serialize};
use strum::VariantArray;

use crate::types::IntegrationKind;

mod platform;

pub use platform::{
    AppliedSettings, Field, Input, Need, PLATFORMS, Platform, SettingsError, SettingsInput, Shown,
    generate_webhook_secret,
};

/// The Graph API version of a Meta connection that names none.
pub const DEFAULT_META_API_VERSION: &str = "v23.0";

/// The LinkedIn API version (`LinkedIn-Version`) of a connection that names none. LinkedIn
/// supports each monthly version for at least a year.
pub const DEFAULT_LINKEDIN_API_VERSION: &str = "202510";

/// A credential: kept by stores, sent to its platform, never printed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Google Analytics 4 Measurement Protocol settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ga4Settings {
    /// The web stream's measurement id, `G-XXXXXXX`.
    pub measurement_id: String,
    /// A Measurement Protocol API secret of the stream.
    pub api_secret: Secret,
    /// Send to the validation endpoint and treat its messages as errors.
    #[serde(default)]
    pub validate: bool,
    /// Overrides `https://www.google-analytics.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Where a conversion sent to Meta happened: the Conversions API's `action_source`, one of
/// the values Meta lists under "action_source" in
/// <https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/server-event>.
/// Meta asks that it be accurate ("you agree that the action_source parameter is accurate
/// to the best of your knowledge").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::AsRefStr, strum::Display, strum::EnumString, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum MetaActionSource {
    /// "Conversion happened in a way that is not listed": the default, since a web-form
    /// lead that a team rates became a customer outside the website, and Meta's other
    /// values each name one channel.
    #[default]
    Other,
    /// "Conversion was made on your website". Meta then also requires the browser's user
    /// agent and the page's URL, which only leads captured in a browser carry.
    Website,
    /// "Conversion happened over the phone".
    PhoneCall,
    /// "Conversion happened in person at your physical store".
    PhysicalStore,
    /// "Conversion happened over email".
    Email,
    /// "Conversion was made via a messaging app, SMS, or online messaging feature".
    Chat,
    /// "Conversion happened automatically, for example, a subscription renewal".
    SystemGenerated,
}

/// Meta Conversions API settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetaSettings {
    /// The pixel (dataset) id.
    pub pixel_id: String,
    /// A system-user access token.
    pub access_token: Secret,
    /// Graph API version, e.g. `v23.0`.
    pub api_version: String,
    /// Sends events to the Test Events tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_event_code: Option<String>,
    /// Where the conversions happened, as Meta's `action_source`.
    #[serde(default)]
    pub action_source: MetaActionSource,
    /// Overrides `https://graph.facebook.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Google Ads settings, through the Data Manager API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleAdsSettings {
    /// The Google Ads customer id conversions belong to (digits).
    pub customer_id: String,
    /// The manager account the credentials act through, if any (digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_customer_id: Option<String>,
    /// OAuth client id.
    pub client_id: String,
    /// OAuth client secret.
    pub client_secret: Secret,
    /// OAuth refresh token with the `datamanager` scope.
    pub refresh_token: Secret,
    /// Overrides `https://oauth2.googleapis.com/token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// Overrides `https://datamanager.googleapis.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Microsoft Advertising offline conversions settings (Campaign Management API v13).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MicrosoftAdsSettings {
    /// The manager's customer id (the `CustomerId` header).
    pub customer_id: String,
    /// The ad account's id (the `CustomerAccountId` header).
    pub account_id: String,
    /// The developer token (the `DeveloperToken` header).
    pub developer_token: Secret,
    /// The Microsoft identity platform application's client id.
    pub client_id: String,
    /// Its client secret: web applications have one, public (desktop) ones do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// A refresh token with the `https://ads.microsoft.com/msads.manage` scope. Microsoft
    /// may hand out a new one with each access token; the worker keeps using this one.
    pub refresh_token: Secret,
    /// Overrides `https://login.microsoftonline.com/common/oauth2/v2.0/token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// Overrides `https://campaign.api.bingads.microsoft.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// LinkedIn Conversions API settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedinSettings {
    /// The LinkedIn application's client id.
    pub client_id: String,
    /// Its client secret.
    pub client_secret: Secret,
    /// A refresh token with the `rw_conversions` scope.
    pub refresh_token: Secret,
    /// The API version, `YYYYMM` (the `LinkedIn-Version` header).
    pub api_version: String,
    /// Overrides `https://www.linkedin.com/oauth/v2/accessToken`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// Overrides `https://api.linkedin.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// TikTok Events API settings: conversions sent as events of a CRM event set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TiktokSettings {
    /// The CRM event set's id (the events' `event_source_id`).
    pub event_set_id: String,
    /// An Events API access token (the `Access-Token` header).
    pub access_token: Secret,
    /// Sends events to Events Manager's Test events tab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_event_code: Option<String>,
    /// Overrides `https://business-api.tiktok.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// What signing in with a platform whose access tokens expire (Reddit, Pinterest) left the
/// integration: the server's application and the refresh token that renews them. Kept
/// until the settings are saved with an access token typed in, which replaces it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    /// The application's client id.
    pub client_id: String,
    /// Its client secret.
    pub client_secret: Secret,
    /// The refresh token the consent gave.
    pub refresh_token: Secret,
    /// Overrides the platform's token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
}

/// Reddit Conversions API v3 settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedditSettings {
    /// The pixel's id (`a2_...` or `t2_...`).
    pub pixel_id: String,
    /// A conversion access token (a Bearer token). Empty when signed in: the sign-in's
    /// refresh token renews one as each expires (after an hour).
    pub access_token: Secret,
    /// What signing in with Reddit left, when it connected the integration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_in: Option<SignedIn>,
    /// Sends events to Events Manager's Event Testing view (its `test_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_id: Option<String>,
    /// Overrides `https://ads-api.reddit.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Pinterest API for Conversions settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinterestSettings {
    /// The ad account's id (digits).
    pub ad_account_id: String,
    /// A conversion access token from Ads Manager (a Bearer token). Empty when signed in:
    /// the sign-in's refresh token renews one as each expires (after 30 days).
    pub access_token: Secret,
    /// What signing in with Pinterest left, when it connected the integration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_in: Option<SignedIn>,
    /// Marks every request `test=true`: Pinterest checks the events and records none.
    #[serde(default)]
    pub test: bool,
    /// Overrides `https://api.pinterest.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// Snapchat Conversions API v3 settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapchatSettings {
    /// The Snap Pixel's id.
    pub pixel_id: String,
    /// A Conversions API token (the `access_token` parameter).
    pub access_token: Secret,
    /// Overrides `https://tr.snapchat.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// A signed JSON webhook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSettings {
    /// Where events are posted.
    pub url: String,
    /// The HMAC-SHA256 signing secret.
    pub secret: Secret,
}

/// One integration's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IntegrationSettings {
    /// Google Ads.
    GoogleAds(GoogleAdsSettings),
    /// Google Analytics 4.
    Ga4(Ga4Settings),
    /// Meta.
    Meta(MetaSettings),
    /// Microsoft Advertising.
    MicrosoftAds(MicrosoftAdsSettings),
    /// LinkedIn.
    Linkedin(LinkedinSettings),
    /// TikTok.
    Tiktok(TiktokSettings),
    /// Reddit.
    Reddit(RedditSettings),
    /// Pinterest.
    Pinterest(PinterestSettings),
    /// Snapchat.
    Snapchat(SnapchatSettings),
    /// Webhook.
    Webhook(WebhookSettings),
}

impl IntegrationSettings {
    /// Puts `new`, which the platform issued in exchange for `old`, in place of the refresh
    /// token, unless the token is no longer `old` (the integration was connected again
    /// meanwhile, and that choice wins). Whether it replaced.
    pub fn rotate_refresh_token(&mut self, old: &Secret, new: Secret) -> bool {
        let token = match self {
            Self::GoogleAds(s) => &mut s.refresh_token,
            Self::MicrosoftAds(s) => &mut s.refresh_token,
            Self::Linkedin(s) => &mut s.refresh_token,
            Self::Reddit(RedditSettings {
                signed_in: Some(signed_in),
                ..
            })
            | Self::Pinterest(PinterestSettings {
                signed_in: Some(signed_in),
                ..
            }) => &mut signed_in.refresh_token,
            Self::Ga4(_)
            | Self::Meta(_)
            | Self::Tiktok(_)
            | Self::Reddit(_)
            | Self::Pinterest(_)
            | Self::Snapchat(_)
            | Self::Webhook(_) => return false,
        };
        if token != old || *token == new {
            return false;
        }
        *token = new;
        true
    }

    /// Which integration these settings are for.
    pub fn kind(&self) -> IntegrationKind {
        match self {
            Self::GoogleAds(_) => IntegrationKind::GoogleAds,
            Self::Ga4(_) => IntegrationKind::Ga4,
            Self::Meta(_) => IntegrationKind::Meta,
            Self::MicrosoftAds(_) => IntegrationKind::MicrosoftAds,
            Self::Linkedin(_) => IntegrationKind::Linkedin,
            Self::Tiktok(_) => IntegrationKind::Tiktok,
            Self::Reddit(_) => IntegrationKind::Reddit,
            Self::Pinterest(_) => IntegrationKind::Pinterest,
            Self::Snapchat(_) => IntegrationKind::Snapchat,
            Self::Webhook(_) => IntegrationKind::Webhook,
        }
    }
}

/// The integrations a project has connected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Integrations {
    /// Google Ads, when connected.
    pub google_ads: Option<GoogleAdsSettings>,
    /// GA4, when connected.
    pub ga4: Option<Ga4Settings>,
    /// Meta, when connected.
    pub meta: Option<MetaSettings>,
    /// Microsoft Advertising, when connected.
    pub microsoft_ads: Option<MicrosoftAdsSettings>,
    /// LinkedIn, when connected.
    pub linkedin: Option<LinkedinSettings>,
    /// TikTok, when connected.
    pub tiktok: Option<TiktokSettings>,
    /// Reddit, when connected.
    pub reddit: Option<RedditSettings>,
    /// Pinterest, when connected.
    pub pinterest: Option<PinterestSettings>,
    /// Snapchat, when connected.
    pub snapchat: Option<SnapchatSettings>,
    /// The webhook, when connected.
    pub webhook: Option<WebhookSettings>,
}

impl Integrations {
    /// Whether `kind` is connected.
    pub fn is_connected(&self, kind: IntegrationKind) -> bool {
        match kind {
            IntegrationKind::GoogleAds => self.google_ads.is_some(),
            IntegrationKind::Ga4 => self.ga4.is_some(),
            IntegrationKind::Meta => self.meta.is_some(),
            IntegrationKind::MicrosoftAds => self.microsoft_ads.is_some(),
            IntegrationKind::Linkedin => self.linkedin.is_some(),
            IntegrationKind::Tiktok => self.tiktok.is_some(),
            IntegrationKind::Reddit => self.reddit.is_some(),
            IntegrationKind::Pinterest => self.pinterest.is_some(),
            IntegrationKind::Snapchat => self.snapchat.is_some(),
            IntegrationKind::Webhook => self.webhook.is_some(),
        }
    }

    /// The OAuth refresh token of `kind`, when it is connected and has one (Google Ads,
    /// Microsoft Advertising, LinkedIn; Reddit and Pinterest when signed in).
    pub fn refresh_token(&self, kind: IntegrationKind) -> Option<&Secret> {
        match kind {
            IntegrationKind::GoogleAds => Some(&self.google_ads.as_ref()?.refresh_token),
            IntegrationKind::MicrosoftAds => Some(&self.microsoft_ads.as_ref()?.refresh_token),
            IntegrationKind::Linkedin => Some(&self.linkedin.as_ref()?.refresh_token),
            IntegrationKind::Reddit => {
                Some(&self.reddit.as_ref()?.signed_in.as_ref()?.refresh_token)
            }
            IntegrationKind::Pinterest => {
                Some(&self.pinterest.as_ref()?.signed_in.as_ref()?.refresh_token)
            }
            IntegrationKind::Ga4
            | IntegrationKind::Meta
            | IntegrationKind::Tiktok
            | IntegrationKind::Snapchat
            | IntegrationKind::Webhook => None,
        }
    }

    /// The connected integrations, in [`IntegrationKind`] order.
    pub fn connected(&self) -> Vec<IntegrationKind> {
        IntegrationKind::VARIANTS
            .iter()
            .copied()
            .filter(|kind| self.is_connected(*kind))
            .collect()
    }

    /// Adds or replaces one integration's settings.
    pub fn set(&mut self, settings: IntegrationSettings) {
        match settings {
            IntegrationSettings::GoogleAds(s) => self.google_ads = Some(s),
            IntegrationSettings::Ga4(s) => self.ga4 = Some(s),
            IntegrationSettings::Meta(s) => self.meta = Some(s),
            IntegrationSettings::MicrosoftAds(s) => self.microsoft_ads = Some(s),
            IntegrationSettings::Linkedin(s) => self.linkedin = Some(s),
            IntegrationSettings::Tiktok(s) => self.tiktok = Some(s),
            IntegrationSettings::Reddit(s) => self.reddit = Some(s),
            IntegrationSettings::Pinterest(s) => self.pinterest = Some(s),
            IntegrationSettings::Snapchat(s) => self.snapchat = Some(s),
            IntegrationSettings::Webhook(s) => self.webhook = Some(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let settings = WebhookSettings {
            url: "https://example.com/hook".into(),
            secret: Secret::new("whsec_abc"),
        };
        let printed = format!("{settings:?}");
        assert!(!printed.contains("whsec_abc"), "{printed}");
        assert_eq!(settings.secret.expose(), "whsec_abc");
    }

    #[test]
    fn integration_settings_are_tagged_by_kind() {
        let settings = IntegrationSettings::Ga4(Ga4Settings {
            measurement_id: "G-TEST".into(),
            api_secret: Secret::new("s3cret"),
            validate: false,
            base_url: None,
        });
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["kind"], "ga4");
        assert_eq!(json["apiSecret"], "s3cret");
        let back: IntegrationSettings = serde_json::from_value(json).unwrap();
        assert_eq!(back, settings);
        assert_eq!(back.kind(), IntegrationKind::Ga4);
    }
}
