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
}

impl Provider {
    /// The integration a consent connects.
    pub fn integration(self) -> IntegrationKind {
        match self {
            Self::Google => IntegrationKind::GoogleAds,
            Self::Microsoft => IntegrationKind::MicrosoftAds,
            Self::Linkedin => IntegrationKind::Linkedin,
            Self::Meta => IntegrationKind::Meta,
        }
    }

    /// The provider of `kind`, if it is connected by signing in.
    pub fn of(kind: IntegrationKind) -> Option<Self> {
        match kind {
            IntegrationKind::GoogleAds => Some(Self::Google),
            IntegrationKind::MicrosoftAds => Some(Self::Microsoft),
            IntegrationKind::Linkedin => Some(Self::Linkedin),
            IntegrationKind::Meta => Some(Self::Meta),
            IntegrationKind::Ga4
            | IntegrationKind::Tiktok
            | IntegrationKind::Reddit
            | IntegrationKind::Pinterest
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
            // (r_marketing_leadgen_automation reads the Lead Gen Forms' responses).
            Self::Linkedin => &[
                "openid",
                "email",
                "rw_conversions",
                "r_ads",
                "r_marketing_leadgen_automation",
            ],
            // https://developers.facebook.com/docs/marketing-api/conversions-api/get-started
            // (ads_management sends events; business_management lists the pixels).
            Self::Meta => &["ads_management", "business_management"],
        }
    }

    /// The platform's own endpoints.
    pub fn endpoints(self) -> Endpoints {
        let (authorize, token, api) = match self {
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
        };
        Endpoints {
            authorize: authorize.to_owned(),
            token: token.to_owned(),
            api: api.to_owned(),
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
