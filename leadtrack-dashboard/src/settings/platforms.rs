//! The platforms as the integrations page shows them: their names, their settings' fields
//! (named as core's [`SettingsInput`] names them), the stored settings as a form shows them
//! (never a credential), and a submitted form as core's input.

use leadtrack_core::integration::{
    Ga4Input, GoogleAdsInput, Integrations, LinkedinInput, MetaInput, MicrosoftAdsInput, Secret,
    SettingsInput, WebhookInput,
};
use leadtrack_core::types::IntegrationKind;
use strum::VariantArray;

use super::ticked;
use crate::session::Form;

/// How a setting is typed in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Input {
    Text,
    /// A credential: never shown back; blank keeps the stored one.
    Secret,
    Check,
}

/// One setting of a platform's form. `name` is the setting's name in core's input (and in
/// its errors).
pub(super) struct Spec {
    pub(super) name: &'static str,
    pub(super) label: &'static str,
    pub(super) hint: &'static str,
    pub(super) input: Input,
    /// Shown under "Advanced": for test servers and unusual accounts.
    pub(super) advanced: bool,
}

const fn spec(name: &'static str, label: &'static str, hint: &'static str, input: Input) -> Spec {
    Spec {
        name,
        label,
        hint,
        input,
        advanced: false,
    }
}

const fn advanced(name: &'static str, label: &'static str, hint: &'static str) -> Spec {
    Spec {
        advanced: true,
        ..spec(name, label, hint, Input::Text)
    }
}

const GOOGLE_ADS: &[Spec] = &[
    spec(
        "customer_id",
        "Customer id",
        "The Google Ads account the conversions belong to, e.g. 123-456-7890.",
        Input::Text,
    ),
    spec(
        "login_customer_id",
        "Manager account id",
        "Only when the credentials act through a manager account.",
        Input::Text,
    ),
    spec("client_id", "OAuth client id", "", Input::Text),
    spec("client_secret", "OAuth client secret", "", Input::Secret),
    spec(
        "refresh_token",
        "Refresh token",
        "With the datamanager scope.",
        Input::Secret,
    ),
    advanced("token_url", "Token URL", "Blank for Google's own."),
    advanced("base_url", "API base URL", "Blank for Google's own."),
];

const GA4: &[Spec] = &[
    spec(
        "measurement_id",
        "Measurement id",
        "The web stream's id, G-XXXXXXX.",
        Input::Text,
    ),
    spec(
        "api_secret",
        "API secret",
        "A Measurement Protocol API secret of the stream (Admin › Data streams).",
        Input::Secret,
    ),
    spec(
        "validate",
        "Validation mode",
        "Send conversions to GA4's validation endpoint instead: nothing is recorded in GA4, and its messages fail the delivery. For setting up only.",
        Input::Check,
    ),
    advanced(
        "base_url",
        "Base URL",
        "Blank for https://www.google-analytics.com.",
    ),
];

const META: &[Spec] = &[
    spec("pixel_id", "Pixel (dataset) id", "", Input::Text),
    spec(
        "access_token",
        "Access token",
        "A system user's token for the Conversions API.",
        Input::Secret,
    ),
    spec(
        "api_version",
        "Graph API version",
        "Blank for the default.",
        Input::Text,
    ),
    spec(
        "test_event_code",
        "Test event code",
        "From Events Manager's Test events tab: events then show there. Remove it when done.",
        Input::Text,
    ),
    spec(
        "action_source",
        "Where leads become customers",
        "Meta's action source: other (blank), phone_call, physical_store, email, chat, website (needs leads captured in a browser) or system_generated.",
        Input::Text,
    ),
    advanced(
        "base_url",
        "Base URL",
        "Blank for https://graph.facebook.com.",
    ),
];

const MICROSOFT_ADS: &[Spec] = &[
    spec(
        "customer_id",
        "Customer id",
        "The manager account's customer id (CustomerId).",
        Input::Text,
    ),
    spec(
        "account_id",
        "Account id",
        "The ad account's id (CustomerAccountId).",
        Input::Text,
    ),
    spec(
        "developer_token",
        "Developer token",
        "From the Microsoft Advertising developer portal.",
        Input::Secret,
    ),
    spec(
        "client_id",
        "OAuth client id",
        "The Microsoft identity platform application's id.",
        Input::Text,
    ),
    spec(
        "client_secret",
        "OAuth client secret",
        "Only for a web application; leave blank for a public (desktop) one.",
        Input::Secret,
    ),
    spec(
        "refresh_token",
        "OAuth refresh token",
        "Granted with the https://ads.microsoft.com/msads.manage scope.",
        Input::Secret,
    ),
    advanced(
        "token_url",
        "Token URL",
        "Blank for https://login.microsoftonline.com/common/oauth2/v2.0/token.",
    ),
    advanced(
        "base_url",
        "Base URL",
        "Blank for https://campaign.api.bingads.microsoft.com.",
    ),
];

const LINKEDIN: &[Spec] = &[
    spec(
        "client_id",
        "OAuth client id",
        "The LinkedIn application's client id.",
        Input::Text,
    ),
    spec("client_secret", "OAuth client secret", "", Input::Secret),
    spec(
        "refresh_token",
        "OAuth refresh token",
        "Granted with the rw_conversions scope by a member with a role on the ad account.",
        Input::Secret,
    ),
    spec(
        "api_version",
        "API version",
        "YYYYMM (the LinkedIn-Version header); blank for the default.",
        Input::Text,
    ),
    advanced(
        "token_url",
        "Token URL",
        "Blank for https://www.linkedin.com/oauth/v2/accessToken.",
    ),
    advanced(
        "base_url",
        "Base URL",
        "Blank for https://api.linkedin.com.",
    ),
];

const WEBHOOK: &[Spec] = &[
    spec(
        "url",
        "URL",
        "Where each conversion is posted as signed JSON, https:// or http://.",
        Input::Text,
    ),
    spec(
        "secret",
        "Signing secret",
        "Leave blank to have one generated; it is shown once.",
        Input::Secret,
    ),
];

/// What the page knows of a platform.
pub(super) struct Platform {
    /// Its name for people.
    pub(super) title: &'static str,
    /// Its path segment, as the command line names it.
    pub(super) slug: &'static str,
    /// Its settings, in the form's order.
    pub(super) specs: &'static [Spec],
    /// What it offers instead of a validation mode (GA4 has one: empty).
    pub(super) no_validation: &'static str,
}

/// The platform `kind` is.
pub(super) fn platform(kind: IntegrationKind) -> Platform {
    let (title, slug, specs, no_validation) = match kind {
        IntegrationKind::GoogleAds => (
            "Google Ads",
            "google-ads",
            GOOGLE_ADS,
            "Each rated lead's conversion is checked when it is sent, and the last delivery \
             above says how that went. Google can also validate a made-up conversion here, \
             recording nothing.",
        ),
        IntegrationKind::Ga4 => ("GA4", "ga4", GA4, ""),
        IntegrationKind::Meta => (
            "Meta",
            "meta",
            META,
            "To watch conversions arrive, set a test event code: they then show in Events \
             Manager's Test events tab, and count for nothing.",
        ),
        IntegrationKind::MicrosoftAds => (
            "Microsoft Advertising",
            "microsoft-ads",
            MICROSOFT_ADS,
            "Microsoft Advertising has no test mode for offline conversions: rate a lead with \
             a Microsoft click id (msclkid) to see a delivery, or check here that the \
             credentials get a token.",
        ),
        IntegrationKind::Linkedin => (
            "LinkedIn",
            "linkedin",
            LINKEDIN,
            "LinkedIn has no test mode for conversions: rate a lead with an email or a LinkedIn \
             click id (li_fat_id) to see a delivery, or check here that the credentials get a \
             token.",
        ),
        IntegrationKind::Webhook => (
            "Webhook",
            "webhook",
            WEBHOOK,
            "Each conversion is posted signed with HMAC-SHA256 of the secret; a signed ping \
             checks that the receiver answers. For new and merged leads as they arrive, add a \
             lead webhook.",
        ),
    };
    Platform {
        title,
        slug,
        specs,
        no_validation,
    }
}

/// The platform a path segment names.
pub(super) fn kind_of(slug: &str) -> Option<IntegrationKind> {
    IntegrationKind::VARIANTS
        .iter()
        .copied()
        .find(|kind| platform(*kind).slug == slug)
}

/// The stored settings as the form shows them; credentials are left out.
pub(super) fn stored(
    kind: IntegrationKind,
    integrations: &Integrations,
) -> Vec<(&'static str, String)> {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    let check = |on: bool| if on { "on" } else { "" }.to_owned();
    match kind {
        IntegrationKind::GoogleAds => integrations.google_ads.as_ref().map(|s| {
            vec![
                ("customer_id", s.customer_id.clone()),
                ("login_customer_id", text(&s.login_customer_id)),
                ("client_id", s.client_id.clone()),
                ("token_url", text(&s.token_url)),
                ("base_url", text(&s.base_url)),
            ]
        }),
        IntegrationKind::Ga4 => integrations.ga4.as_ref().map(|s| {
            vec![
                ("measurement_id", s.measurement_id.clone()),
                ("validate", check(s.validate)),
                ("base_url", text(&s.base_url)),
            ]
        }),
        IntegrationKind::Meta => integrations.meta.as_ref().map(|s| {
            vec![
                ("pixel_id", s.pixel_id.clone()),
                ("api_version", s.api_version.clone()),
                ("test_event_code", text(&s.test_event_code)),
                ("action_source", s.action_source.to_string()),
                ("base_url", text(&s.base_url)),
            ]
        }),
        IntegrationKind::MicrosoftAds => integrations.microsoft_ads.as_ref().map(|s| {
            vec![
                ("customer_id", s.customer_id.clone()),
                ("account_id", s.account_id.clone()),
                ("client_id", s.client_id.clone()),
                ("token_url", text(&s.token_url)),
                ("base_url", text(&s.base_url)),
            ]
        }),
        IntegrationKind::Linkedin => integrations.linkedin.as_ref().map(|s| {
            vec![
                ("client_id", s.client_id.clone()),
                ("api_version", s.api_version.clone()),
                ("token_url", text(&s.token_url)),
                ("base_url", text(&s.base_url)),
            ]
        }),
        IntegrationKind::Webhook => integrations
            .webhook
            .as_ref()
            .map(|s| vec![("url", s.url.clone())]),
    }
    .unwrap_or_default()
}

/// The settings a submitted form gives, for core to merge over the stored ones.
pub(super) fn input(kind: IntegrationKind, form: &Form) -> SettingsInput {
    let text = |name| Some(form.get(name).to_owned());
    let secret = |name| Some(Secret::new(form.get(name)));
    match kind {
        IntegrationKind::GoogleAds => SettingsInput::GoogleAds(GoogleAdsInput {
            customer_id: text("customer_id"),
            login_customer_id: text("login_customer_id"),
            client_id: text("client_id"),
            client_secret: secret("client_secret"),
            refresh_token: secret("refresh_token"),
            token_url: text("token_url"),
            base_url: text("base_url"),
        }),
        IntegrationKind::Ga4 => SettingsInput::Ga4(Ga4Input {
            measurement_id: text("measurement_id"),
            api_secret: secret("api_secret"),
            validate: Some(ticked(form, "validate")),
            base_url: text("base_url"),
        }),
        IntegrationKind::Meta => SettingsInput::Meta(MetaInput {
            pixel_id: text("pixel_id"),
            access_token: secret("access_token"),
            api_version: text("api_version"),
            test_event_code: text("test_event_code"),
            action_source: text("action_source"),
            base_url: text("base_url"),
        }),
        IntegrationKind::MicrosoftAds => SettingsInput::MicrosoftAds(MicrosoftAdsInput {
            customer_id: text("customer_id"),
            account_id: text("account_id"),
            developer_token: secret("developer_token"),
            client_id: text("client_id"),
            client_secret: secret("client_secret"),
            refresh_token: secret("refresh_token"),
            token_url: text("token_url"),
            base_url: text("base_url"),
        }),
        IntegrationKind::Linkedin => SettingsInput::Linkedin(LinkedinInput {
            client_id: text("client_id"),
            client_secret: secret("client_secret"),
            refresh_token: secret("refresh_token"),
            api_version: text("api_version"),
            token_url: text("token_url"),
            base_url: text("base_url"),
        }),
        IntegrationKind::Webhook => SettingsInput::Webhook(WebhookInput {
            url: text("url"),
            secret: secret("secret"),
            base_url: None,
        }),
    }
}
