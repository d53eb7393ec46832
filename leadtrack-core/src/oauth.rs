//! Signing in with an ad platform: the platforms a project can connect by OAuth 2.0
//! ([`Provider`]), the operator's registered application for each ([`OAuthApp`]), the
//! consent asked for with PKCE ([`Authorization`]), and what a consent leaves the project
//! ([`OAuthGrant`]).
//!
//! The flow is the authorization code grant (RFC 6749 section 4.1) with PKCE's `S256`
//! challenge (RFC 7636); `state` ties the platform's answer to the browser that asked.
//! `leadtrack-platforms` makes the requests, with the `oauth2` crate.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::integration::Secret;
use crate::types::IntegrationKind;

/// A platform a project connects by signing in.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::AsRefStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Provider {
    /// Google, for Google Ads.
    Google,
    /// Microsoft, for Microsoft Advertising.
    Microsoft,
    /// LinkedIn, for LinkedIn's Conversions API.
    Linkedin,
    /// Meta (Facebook Login), for the Conversions API. Meta issues no refresh token: its
    /// grant holds a long-lived user access token (60 days) instead.
    Meta,
    /// Reddit, for the Conversions API v3 (access tokens last an hour).
    Reddit,
    /// Pinterest, for the API for Conversions (access tokens last 30 days).
    Pinterest,
}

/// How an application's credentials go to a platform's token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuth {
    /// In the form, beside the grant (RFC 6749 section 2.3.1): LinkedIn requires it.
    Form,
    /// In an HTTP Basic `Authorization` header: Reddit and Pinterest require it.
    Basic,
}

impl Provider {
    /// The integration a consent connects.
    pub fn integration(self) -> IntegrationKind {
        match self {
            Self::Google => IntegrationKind::GoogleAds,
            Self::Microsoft => IntegrationKind::MicrosoftAds,
            Self::Linkedin => IntegrationKind::Linkedin,
            Self::Meta => IntegrationKind::Meta,
            Self::Reddit => IntegrationKind::Reddit,
            Self::Pinterest => IntegrationKind::Pinterest,
        }
    }

    /// The provider of `kind`, if it is connected by signing in.
    pub fn of(kind: IntegrationKind) -> Option<Self> {
        match kind {
            IntegrationKind::GoogleAds => Some(Self::Google),
            IntegrationKind::MicrosoftAds => Some(Self::Microsoft),
            IntegrationKind::Linkedin => Some(Self::Linkedin),
            IntegrationKind::Meta => Some(Self::Meta),
            IntegrationKind::Reddit => Some(Self::Reddit),
            IntegrationKind::Pinterest => Some(Self::Pinterest),
            IntegrationKind::Ga4
            | IntegrationKind::Tiktok
            | IntegrationKind::Snapchat
            | IntegrationKind::Webhook => None,
        }
    }

    /// Its name for people: "Connect with Google".
    pub fn name(self) -> &'static str {
        match self {
            Self::Google => "Google",
            Self::Microsoft => "Microsoft",
            Self::Linkedin => "LinkedIn",
            Self::Meta => "Meta",
            Self::Reddit => "Reddit",
            Self::Pinterest => "Pinterest",
        }
    }

    /// The scopes asked for: sending conversions, reading the accounts and conversions to
    /// pick from, and who signed in (OpenID Connect's `email`).
    pub fn scopes(self) -> &'static [&'static str] {
        match self {
            // https://developers.google.com/data-manager/api/get-started/set-up-access and
            // https://developers.google.com/google-ads/api/docs/oauth/overview
            Self::Google => &[
                "openid",
                "email",
                "https://www.googleapis.com/auth/datamanager",
                "https://www.googleapis.com/auth/adwords",
            ],
            // https://learn.microsoft.com/en-us/advertising/guides/authentication-oauth-consent
            Self::Microsoft => &[
                "openid",
                "email",
                "offline_access",
                "https://ads.microsoft.com/msads.manage",
            ],
            // https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
            // https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/leadsync
            // (r_marketing_leadgen_automation reads the Lead Gen Forms' responses), and
            // https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/ads-reporting
            // (r_ads_reporting reads the campaigns' spend).
            Self::Linkedin => &[
                "openid",
                "email",
                "rw_conversions",
                "r_ads",
                "r_ads_reporting",
                "r_marketing_leadgen_automation",
            ],
            // https://developers.facebook.com/docs/marketing-api/conversions-api/get-started
            // (ads_management sends events; business_management lists the pixels).
            Self::Meta => &["ads_management", "business_management"],
            // https://ads-api.reddit.com/docs/v3/ (adsconversions sends conversion events;
            // adsread lists the businesses and ad accounts to pick from).
            Self::Reddit => &["adsconversions", "adsread"],
            // https://developers.pinterest.com/docs/getting-started/scopes/ (ads:write sends
            // conversion events; ads:read lists the ad accounts).
            Self::Pinterest => &["ads:read", "ads:write"],
        }
    }

    /// What joins the scopes in the consent request: a space (RFC 6749 section 3.3), but a
    /// comma for Pinterest, whose consent page reads "a comma-separated list"
    /// (<https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/>).
    pub fn scope_separator(self) -> &'static str {
        match self {
            Self::Pinterest => ",",
            _ => " ",
        }
    }

    /// How the application's credentials go to the token endpoint: Reddit's
    /// (<https://github.com/reddit-archive/reddit/wiki/OAuth2>, "Retrieving the access
    /// token") and Pinterest's token endpoints want them in a Basic `Authorization` header.
    pub fn client_auth(self) -> ClientAuth {
        match self {
            Self::Reddit | Self::Pinterest => ClientAuth::Basic,
            Self::Google | Self::Microsoft | Self::Linkedin | Self::Meta => ClientAuth::Form,
        }
    }

    /// The platform's own endpoints.
    pub fn endpoints(self) -> Endpoints {
        let (authorize, token, api) = self.urls();
        Endpoints {
            authorize: authorize.to_owned(),
            token: token.to_owned(),
            api: api.to_owned(),
        }
    }

    /// The platform's own token endpoint.
    pub fn token_url(self) -> &'static str {
        self.urls().1
    }

    /// The consent page, the token endpoint and the account API.
    fn urls(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::Google => (
                "https://accounts.google.com/o/oauth2/v2/auth",
                "https://oauth2.googleapis.com/token",
                "https://googleads.googleapis.com",
            ),
            Self::Microsoft => (
                "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
                "https://login.microsoftonline.com/common/oauth2/v2.0/token",
                "https://clientcenter.api.bingads.microsoft.com",
            ),
            Self::Linkedin => (
                "https://www.linkedin.com/oauth/v2/authorization",
                "https://www.linkedin.com/oauth/v2/accessToken",
                "https://api.linkedin.com",
            ),
            // https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
            Self::Meta => (
                "https://www.facebook.com/v23.0/dialog/oauth",
                "https://graph.facebook.com/v23.0/oauth/access_token",
                "https://graph.facebook.com",
            ),
            // https://github.com/reddit-archive/reddit/wiki/OAuth2 and the Ads API's
            // https://ads-api.reddit.com/docs/v3/
            Self::Reddit => (
                "https://www.reddit.com/api/v1/authorize",
                "https://www.reddit.com/api/v1/access_token",
                "https://ads-api.reddit.com",
            ),
            // https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/
            Self::Pinterest => (
                "https://www.pinterest.com/oauth/",
                "https://api.pinterest.com/v5/oauth/token",
                "https://api.pinterest.com",
            ),
        }
    }
}

/// Where a platform's consent page, token endpoint and account API are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// The consent page (the authorization endpoint).
    pub authorize: String,
    /// The token endpoint.
    pub token: String,
    /// The API the pickers list accounts and conversions from.
    pub api: String,
}

/// The application the operator registered with a platform, once for the server.
#[derive(Clone, Debug)]
pub struct OAuthApp {
    /// The platform.
    pub provider: Provider,
    /// Its client id.
    pub client_id: String,
    /// Its client secret.
    pub client_secret: Secret,
    /// The API's developer token, where the platform wants one (Google Ads, Microsoft
    /// Advertising).
    pub developer_token: Option<Secret>,
    /// Where the platform is: its own endpoints, or a test's.
    pub endpoints: Endpoints,
}

/// One consent asked for: the URL to send the browser to, with what the answer is checked
/// against when it comes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authorization {
    /// The consent page's URL.
    pub url: String,
    /// The `state` the answer must carry.
    pub state: String,
    /// The PKCE verifier the code is exchanged with.
    pub verifier: String,
}

/// What a consent left a project: whom it was given by, and the refresh token it gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthGrant {
    /// The platform.
    pub provider: Provider,
    /// Who signed in, as the platform names them (an email address, or Meta's name).
    pub account: String,
    /// The refresh token; Meta's long-lived user access token, which it gives instead.
    pub refresh_token: Secret,
    /// When.
    pub granted_at: DateTime<Utc>,
}
