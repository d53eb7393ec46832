//! Settings as a person gives them, on the command line or in the dashboard's forms, and
//! the one set of rules that merges them over the stored ones.

use strum::VariantArray;

use super::{
    Ga4Settings, GoogleAdsSettings, IntegrationSettings, Integrations, LinkedinSettings,
    MetaActionSource, MetaSettings, MicrosoftAdsSettings, Secret, WebhookSettings,
};
use crate::key::GeneratedKey;
use crate::types::IntegrationKind;

/// The Graph API version of a Meta connection that names none.
pub const DEFAULT_META_API_VERSION: &str = "v23.0";

/// The LinkedIn API version (`LinkedIn-Version`) of a connection that names none. LinkedIn
/// supports each monthly version for at least a year.
pub const DEFAULT_LINKEDIN_API_VERSION: &str = "202510";

/// GA4 settings as a person gives them; see [`SettingsInput`] for what `None` and blank
/// values mean.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ga4Input {
    /// [`Ga4Settings::measurement_id`]; required.
    pub measurement_id: Option<String>,
    /// [`Ga4Settings::api_secret`]; required.
    pub api_secret: Option<Secret>,
    /// [`Ga4Settings::validate`]; off unless given.
    pub validate: Option<bool>,
    /// [`Ga4Settings::base_url`].
    pub base_url: Option<String>,
}

/// Meta settings as a person gives them; see [`SettingsInput`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetaInput {
    /// [`MetaSettings::pixel_id`]; required.
    pub pixel_id: Option<String>,
    /// [`MetaSettings::access_token`]; required.
    pub access_token: Option<Secret>,
    /// [`MetaSettings::api_version`]; [`DEFAULT_META_API_VERSION`] when there is none.
    pub api_version: Option<String>,
    /// [`MetaSettings::test_event_code`].
    pub test_event_code: Option<String>,
    /// [`MetaSettings::action_source`], by its wire name (`phone_call`); blank for the
    /// default.
    pub action_source: Option<String>,
    /// [`MetaSettings::base_url`].
    pub base_url: Option<String>,
}

/// Google Ads settings as a person gives them; see [`SettingsInput`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoogleAdsInput {
    /// [`GoogleAdsSettings::customer_id`]; required.
    pub customer_id: Option<String>,
    /// [`GoogleAdsSettings::login_customer_id`].
    pub login_customer_id: Option<String>,
    /// [`GoogleAdsSettings::client_id`]; required.
    pub client_id: Option<String>,
    /// [`GoogleAdsSettings::client_secret`]; required.
    pub client_secret: Option<Secret>,
    /// [`GoogleAdsSettings::refresh_token`]; required.
    pub refresh_token: Option<Secret>,
    /// [`GoogleAdsSettings::token_url`].
    pub token_url: Option<String>,
    /// [`GoogleAdsSettings::base_url`].
    pub base_url: Option<String>,
}

/// Microsoft Advertising settings as a person gives them; see [`SettingsInput`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MicrosoftAdsInput {
    /// [`MicrosoftAdsSettings::customer_id`]; required.
    pub customer_id: Option<String>,
    /// [`MicrosoftAdsSettings::account_id`]; required.
    pub account_id: Option<String>,
    /// [`MicrosoftAdsSettings::developer_token`]; required.
    pub developer_token: Option<Secret>,
    /// [`MicrosoftAdsSettings::client_id`]; required.
    pub client_id: Option<String>,
    /// [`MicrosoftAdsSettings::client_secret`]; blank keeps the stored one.
    pub client_secret: Option<Secret>,
    /// [`MicrosoftAdsSettings::refresh_token`]; required.
    pub refresh_token: Option<Secret>,
    /// [`MicrosoftAdsSettings::token_url`].
    pub token_url: Option<String>,
    /// [`MicrosoftAdsSettings::base_url`].
    pub base_url: Option<String>,
}

/// LinkedIn settings as a person gives them; see [`SettingsInput`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkedinInput {
    /// [`LinkedinSettings::client_id`]; required.
    pub client_id: Option<String>,
    /// [`LinkedinSettings::client_secret`]; required.
    pub client_secret: Option<Secret>,
    /// [`LinkedinSettings::refresh_token`]; required.
    pub refresh_token: Option<Secret>,
    /// [`LinkedinSettings::api_version`]; [`DEFAULT_LINKEDIN_API_VERSION`] when there is
    /// none.
    pub api_version: Option<String>,
    /// [`LinkedinSettings::token_url`].
    pub token_url: Option<String>,
    /// [`LinkedinSettings::base_url`].
    pub base_url: Option<String>,
}

/// Webhook settings as a person gives them; see [`SettingsInput`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebhookInput {
    /// [`WebhookSettings::url`]: `http://` or `https://`. Unlike other required settings,
    /// a blank one is not kept: the webhook then needs `base_url`.
    pub url: Option<String>,
    /// [`WebhookSettings::secret`]; generated (and to be shown once) when there is none.
    pub secret: Option<Secret>,
    /// Stands in for a missing `url`: the command line's `--base-url` names the webhook's
    /// address too.
    pub base_url: Option<String>,
}

/// One integration's settings as a person gives them, on the command line or in a form,
/// to be merged over the stored ones by [`SettingsInput::apply`].
///
/// `None` keeps what is stored. A blank value removes an optional setting (the platform's
/// default applies again) but keeps a required setting or a credential as stored, so a
/// form can leave credentials blank to keep them. Given values are trimmed, credentials
/// excepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingsInput {
    /// Google Ads.
    GoogleAds(GoogleAdsInput),
    /// Google Analytics 4.
    Ga4(Ga4Input),
    /// Meta.
    Meta(MetaInput),
    /// Microsoft Advertising.
    MicrosoftAds(MicrosoftAdsInput),
    /// LinkedIn.
    Linkedin(LinkedinInput),
    /// Webhook.
    Webhook(WebhookInput),
}

/// Settings ready to store, from [`SettingsInput::apply`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedSettings {
    /// The integration's settings.
    pub settings: IntegrationSettings,
    /// The webhook signing secret, when one was generated: shown to the person once.
    pub generated_secret: Option<Secret>,
}

/// Why the settings given for an integration cannot be stored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A setting the integration needs was given neither now nor before.
    #[error("{setting} is needed to connect {integration}")]
    Missing {
        /// The setting, as the input's field names it (`measurement_id`).
        setting: &'static str,
        /// The integration, for people (`GA4`, `Google Ads`, `the webhook`).
        integration: &'static str,
    },
    /// The webhook URL does not start with `https://` or `http://`.
    #[error("the webhook URL {0:?} must start with https:// or http://")]
    WebhookUrl(String),
    /// Meta's action source is not one of [`MetaActionSource`]'s.
    #[error("action source {given:?} is not one of Meta's: {allowed}")]
    MetaActionSource {
        /// What was given.
        given: String,
        /// The values allowed, for people.
        allowed: String,
    },
}

impl SettingsError {
    /// The input's field the error is about (`measurement_id`, `url`).
    pub fn setting(&self) -> &'static str {
        match self {
            Self::Missing { setting, .. } => setting,
            Self::WebhookUrl(_) => "url",
            Self::MetaActionSource { .. } => "action_source",
        }
    }
}

/// A given value where blank means "none"; `None` keeps `current`.
fn optional(value: Option<String>, current: Option<String>) -> Option<String> {
    match value {
        Some(text) if text.trim().is_empty() => None,
        Some(text) => Some(text.trim().to_owned()),
        None => current,
    }
}

/// A value the integration needs: given now (not blank), or stored already.
fn required(
    value: Option<String>,
    current: Option<&str>,
    setting: &'static str,
    integration: &'static str,
) -> Result<String, SettingsError> {
    value
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .or_else(|| current.map(str::to_owned))
        .ok_or(SettingsError::Missing {
            setting,
            integration,
        })
}

/// A credential the integration needs: given now (not blank), or stored already.
fn required_secret(
    value: Option<Secret>,
    current: Option<&Secret>,
    setting: &'static str,
    integration: &'static str,
) -> Result<Secret, SettingsError> {
    let value = value.map(|secret| secret.expose().to_owned());
    required(value, current.map(Secret::expose), setting, integration).map(Secret::new)
}

/// A fresh webhook signing secret, `whsec_` and 48 hex digits.
pub fn generate_webhook_secret() -> Secret {
    let key = GeneratedKey::generate().key;
    Secret::new(format!("whsec_{}", key.trim_start_matches("lt_")))
}

impl Ga4Input {
    fn apply(self, old: Option<&Ga4Settings>) -> Result<Ga4Settings, SettingsError> {
        Ok(Ga4Settings {
            measurement_id: required(
                self.measurement_id,
                old.map(|s| s.measurement_id.as_str()),
                "measurement_id",
                "GA4",
            )?,
            api_secret: required_secret(
                self.api_secret,
                old.map(|s| &s.api_secret),
                "api_secret",
                "GA4",
            )?,
            validate: self.validate.or(old.map(|s| s.validate)).unwrap_or(false),
            base_url: optional(self.base_url, old.and_then(|s| s.base_url.clone())),
        })
    }
}

impl MetaInput {
    fn apply(self, old: Option<&MetaSettings>) -> Result<MetaSettings, SettingsError> {
        Ok(MetaSettings {
            pixel_id: required(
                self.pixel_id,
                old.map(|s| s.pixel_id.as_str()),
                "pixel_id",
                "Meta",
            )?,
            access_token: required_secret(
                self.access_token,
                old.map(|s| &s.access_token),
                "access_token",
                "Meta",
            )?,
            api_version: optional(self.api_version, old.map(|s| s.api_version.clone()))
                .unwrap_or_else(|| DEFAULT_META_API_VERSION.to_owned()),
            test_event_code: optional(
                self.test_event_code,
                old.and_then(|s| s.test_event_code.clone()),
            ),
            action_source: match self.action_source.as_deref().map(str::trim) {
                None => old.map(|s| s.action_source).unwrap_or_default(),
                Some("") => MetaActionSource::default(),
                Some(given) => given.to_ascii_lowercase().parse().map_err(|_| {
                    SettingsError::MetaActionSource {
                        given: given.to_owned(),
                        allowed: MetaActionSource::VARIANTS
                            .iter()
                            .map(AsRef::as_ref)
                            .collect::<Vec<_>>()
                            .join(", "),
                    }
                })?,
            },
            base_url: optional(self.base_url, old.and_then(|s| s.base_url.clone())),
        })
    }
}

impl GoogleAdsInput {
    fn apply(self, old: Option<&GoogleAdsSettings>) -> Result<GoogleAdsSettings, SettingsError> {
        let name = "Google Ads";
        Ok(GoogleAdsSettings {
            customer_id: required(
                self.customer_id,
                old.map(|s| s.customer_id.as_str()),
                "customer_id",
                name,
            )?,
            login_customer_id: optional(
                self.login_customer_id,
                old.and_then(|s| s.login_customer_id.clone()),
            ),
            client_id: required(
                self.client_id,
                old.map(|s| s.client_id.as_str()),
                "client_id",
                name,
            )?,
            client_secret: required_secret(
                self.client_secret,
                old.map(|s| &s.client_secret),
                "client_secret",
                name,
            )?,
            refresh_token: required_secret(
                self.refresh_token,
                old.map(|s| &s.refresh_token),
                "refresh_token",
                name,
            )?,
            token_url: optional(self.token_url, old.and_then(|s| s.token_url.clone())),
            base_url: optional(self.base_url, old.and_then(|s| s.base_url.clone())),
        })
    }
}

impl MicrosoftAdsInput {
    fn apply(
        self,
        old: Option<&MicrosoftAdsSettings>,
    ) -> Result<MicrosoftAdsSettings, SettingsError> {
        let name = "Microsoft Advertising";
        let client_secret = self
            .client_secret
            .filter(|secret| !secret.expose().trim().is_empty())
            .or_else(|| old.and_then(|s| s.client_secret.clone()));
        Ok(MicrosoftAdsSettings {
            customer_id: required(
                self.customer_id,
                old.map(|s| s.customer_id.as_str()),
                "customer_id",
                name,
            )?,
            account_id: required(
                self.account_id,
                old.map(|s| s.account_id.as_str()),
                "account_id",
                name,
            )?,
            developer_token: required_secret(
                self.developer_token,
                old.map(|s| &s.developer_token),
                "developer_token",
                name,
            )?,
            client_id: required(
                self.client_id,
                old.map(|s| s.client_id.as_str()),
                "client_id",
                name,
            )?,
            client_secret,
            refresh_token: required_secret(
                self.refresh_token,
                old.map(|s| &s.refresh_token),
                "refresh_token",
                name,
            )?,
            token_url: optional(self.token_url, old.and_then(|s| s.token_url.clone())),
            base_url: optional(self.base_url, old.and_then(|s| s.base_url.clone())),
        })
    }
}

impl LinkedinInput {
    fn apply(self, old: Option<&LinkedinSettings>) -> Result<LinkedinSettings, SettingsError> {
        let name = "LinkedIn";
        Ok(LinkedinSettings {
            client_id: required(
                self.client_id,
                old.map(|s| s.client_id.as_str()),
                "client_id",
                name,
            )?,
            client_secret: required_secret(
                self.client_secret,
                old.map(|s| &s.client_secret),
                "client_secret",
                name,
            )?,
            refresh_token: required_secret(
                self.refresh_token,
                old.map(|s| &s.refresh_token),
                "refresh_token",
                name,
            )?,
            api_version: optional(self.api_version, old.map(|s| s.api_version.clone()))
                .unwrap_or_else(|| DEFAULT_LINKEDIN_API_VERSION.to_owned()),
            token_url: optional(self.token_url, old.and_then(|s| s.token_url.clone())),
            base_url: optional(self.base_url, old.and_then(|s| s.base_url.clone())),
        })
    }
}

impl WebhookInput {
    /// The settings, and the signing secret when one had to be generated.
    fn apply(
        self,
        old: Option<&WebhookSettings>,
    ) -> Result<(WebhookSettings, Option<Secret>), SettingsError> {
        let url = optional(self.url, old.map(|s| s.url.clone()))
            .or_else(|| self.base_url.filter(|u| !u.trim().is_empty()))
            .ok_or(SettingsError::Missing {
                setting: "url",
                integration: "the webhook",
            })?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(SettingsError::WebhookUrl(url));
        }
        let given = self.secret.filter(|s| !s.expose().trim().is_empty());
        let (secret, generated) = match (given, old) {
            (Some(secret), _) => (secret, None),
            (None, Some(old)) => (old.secret.clone(), None),
            (None, None) => {
                let secret = generate_webhook_secret();
                (secret.clone(), Some(secret))
            }
        };
        Ok((WebhookSettings { url, secret }, generated))
    }
}

impl SettingsInput {
    /// Which integration the input is for.
    pub fn kind(&self) -> IntegrationKind {
        match self {
            Self::GoogleAds(_) => IntegrationKind::GoogleAds,
            Self::Ga4(_) => IntegrationKind::Ga4,
            Self::Meta(_) => IntegrationKind::Meta,
            Self::MicrosoftAds(_) => IntegrationKind::MicrosoftAds,
            Self::Linkedin(_) => IntegrationKind::Linkedin,
            Self::Webhook(_) => IntegrationKind::Webhook,
        }
    }

    /// The settings to store: this input merged over the project's `current` ones.
    pub fn apply(self, current: &Integrations) -> Result<AppliedSettings, SettingsError> {
        let (settings, generated_secret) = match self {
            Self::Ga4(input) => (
                IntegrationSettings::Ga4(input.apply(current.ga4.as_ref())?),
                None,
            ),
            Self::Meta(input) => (
                IntegrationSettings::Meta(input.apply(current.meta.as_ref())?),
                None,
            ),
            Self::GoogleAds(input) => (
                IntegrationSettings::GoogleAds(input.apply(current.google_ads.as_ref())?),
                None,
            ),
            Self::MicrosoftAds(input) => (
                IntegrationSettings::MicrosoftAds(input.apply(current.microsoft_ads.as_ref())?),
                None,
            ),
            Self::Linkedin(input) => (
                IntegrationSettings::Linkedin(input.apply(current.linkedin.as_ref())?),
                None,
            ),
            Self::Webhook(input) => {
                let (settings, generated) = input.apply(current.webhook.as_ref())?;
                (IntegrationSettings::Webhook(settings), generated)
            }
        };
        Ok(AppliedSettings {
            settings,
            generated_secret,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ga4(measurement_id: &str, api_secret: &str) -> SettingsInput {
        SettingsInput::Ga4(Ga4Input {
            measurement_id: Some(measurement_id.into()),
            api_secret: Some(Secret::new(api_secret)),
            ..Ga4Input::default()
        })
    }

    #[test]
    fn inputs_merge_over_stored_settings() {
        let mut current = Integrations::default();
        let missing = SettingsInput::Ga4(Ga4Input::default())
            .apply(&current)
            .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "measurement_id is needed to connect GA4"
        );
        assert_eq!(missing.setting(), "measurement_id");

        let applied = ga4(" G-ONE ", "s3cret").apply(&current).unwrap();
        assert_eq!(applied.generated_secret, None);
        current.set(applied.settings);
        let stored = current.ga4.clone().unwrap();
        assert_eq!(stored.measurement_id, "G-ONE");
        assert!(!stored.validate);

        // Blank credentials and required values keep the stored ones; blank optional
        // values remove theirs.
        let changed = SettingsInput::Ga4(Ga4Input {
            measurement_id: Some(" ".into()),
            api_secret: Some(Secret::new("")),
            validate: Some(true),
            base_url: Some("http://127.0.0.1:9".into()),
        })
        .apply(&current)
        .unwrap();
        current.set(changed.settings);
        let stored = current.ga4.clone().unwrap();
        assert_eq!(
            (stored.measurement_id.as_str(), stored.api_secret.expose()),
            ("G-ONE", "s3cret")
        );
        assert!(stored.validate);
        assert_eq!(stored.base_url.as_deref(), Some("http://127.0.0.1:9"));
        let reset = SettingsInput::Ga4(Ga4Input {
            base_url: Some(String::new()),
            ..Ga4Input::default()
        })
        .apply(&current)
        .unwrap();
        let IntegrationSettings::Ga4(reset) = reset.settings else {
            panic!("GA4 settings");
        };
        assert_eq!(reset.base_url, None);
        assert!(reset.validate, "kept when not given");
    }

    #[test]
    fn meta_and_google_ads_need_their_credentials() {
        let none = Integrations::default();
        let meta = SettingsInput::Meta(MetaInput {
            pixel_id: Some("777".into()),
            access_token: Some(Secret::new("token")),
            ..MetaInput::default()
        })
        .apply(&none)
        .unwrap();
        let IntegrationSettings::Meta(meta) = meta.settings else {
            panic!("Meta settings");
        };
        assert_eq!(meta.api_version, DEFAULT_META_API_VERSION);
        let ads = SettingsInput::GoogleAds(GoogleAdsInput {
            customer_id: Some("1".into()),
            client_id: Some("cid".into()),
            client_secret: Some(Secret::new("cs")),
            ..GoogleAdsInput::default()
        })
        .apply(&none)
        .unwrap_err();
        assert_eq!(
            ads,
            SettingsError::Missing {
                setting: "refresh_token",
                integration: "Google Ads"
            }
        );
    }

    #[test]
    fn a_webhook_gets_a_secret_once_and_an_http_url() {
        let mut current = Integrations::default();
        let missing = SettingsInput::Webhook(WebhookInput::default())
            .apply(&current)
            .unwrap_err();
        assert_eq!(missing.to_string(), "url is needed to connect the webhook");
        let ftp = SettingsInput::Webhook(WebhookInput {
            url: Some("ftp://example.com".into()),
            ..WebhookInput::default()
        })
        .apply(&current)
        .unwrap_err();
        assert_eq!(
            ftp.to_string(),
            "the webhook URL \"ftp://example.com\" must start with https:// or http://"
        );
        assert_eq!(ftp.setting(), "url");

        let connected = SettingsInput::Webhook(WebhookInput {
            url: Some("https://example.com/hook".into()),
            ..WebhookInput::default()
        })
        .apply(&current)
        .unwrap();
        let secret = connected.generated_secret.clone().unwrap();
        assert!(secret.expose().starts_with("whsec_"), "{secret:?}");
        current.set(connected.settings);
        assert_eq!(current.webhook.as_ref().unwrap().secret, secret);

        let moved = SettingsInput::Webhook(WebhookInput {
            base_url: Some("http://127.0.0.1:9/hook".into()),
            url: Some(String::new()),
            secret: Some(Secret::new(" ")),
        })
        .apply(&current)
        .unwrap();
        assert_eq!(moved.generated_secret, None, "the stored secret is kept");
        let IntegrationSettings::Webhook(moved) = moved.settings else {
            panic!("webhook settings");
        };
        assert_eq!(
            (moved.url.as_str(), moved.secret.expose()),
            ("http://127.0.0.1:9/hook", secret.expose())
        );
    }
}
