//! The applications the operator registers with the ad platforms, once for the server, so
//! that owners connect a project by signing in (docs/platform-apps.md says how to register
//! each).

use clap::Args;
use leadtrack_core::integration::Secret;
use leadtrack_core::oauth::{OAuthApp, Provider};

use crate::Failure;

/// The platforms' applications: a client id and secret each, and the developer tokens of
/// the APIs that want one.
#[derive(Debug, Args)]
#[command(next_help_heading = "Platform apps")]
pub(crate) struct PlatformApps {
    /// The Google OAuth client's id, for "Connect with Google" (Google Ads).
    #[arg(long, env = "LEADTRACK_GOOGLE_CLIENT_ID", value_name = "ID")]
    pub(crate) google_client_id: Option<String>,
    /// The Google OAuth client's secret.
    #[arg(
        long,
        env = "LEADTRACK_GOOGLE_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub(crate) google_client_secret: Option<String>,
    /// The Google Ads API developer token, which lists the accounts and conversion actions to
    /// pick from.
    #[arg(
        long,
        env = "LEADTRACK_GOOGLE_ADS_DEVELOPER_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub(crate) google_ads_developer_token: Option<String>,
    /// The Microsoft identity platform application's id, for "Connect with Microsoft"
    /// (Microsoft Advertising).
    #[arg(long, env = "LEADTRACK_MICROSOFT_CLIENT_ID", value_name = "ID")]
    pub(crate) microsoft_client_id: Option<String>,
    /// Its client secret.
    #[arg(
        long,
        env = "LEADTRACK_MICROSOFT_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub(crate) microsoft_client_secret: Option<String>,
    /// The Microsoft Advertising developer token.
    #[arg(
        long,
        env = "LEADTRACK_MICROSOFT_ADS_DEVELOPER_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub(crate) microsoft_ads_developer_token: Option<String>,
    /// The LinkedIn application's client id, for "Connect with LinkedIn".
    #[arg(long, env = "LEADTRACK_LINKEDIN_CLIENT_ID", value_name = "ID")]
    pub(crate) linkedin_client_id: Option<String>,
    /// Its client secret.
    #[arg(
        long,
        env = "LEADTRACK_LINKEDIN_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub(crate) linkedin_client_secret: Option<String>,
    /// The Reddit application's client id (a web app), for "Connect with Reddit".
    #[arg(long, env = "LEADTRACK_REDDIT_CLIENT_ID", value_name = "ID")]
    pub(crate) reddit_client_id: Option<String>,
    /// Its client secret.
    #[arg(
        long,
        env = "LEADTRACK_REDDIT_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub(crate) reddit_client_secret: Option<String>,
    /// The Pinterest app's id, for "Connect with Pinterest".
    #[arg(long, env = "LEADTRACK_PINTEREST_CLIENT_ID", value_name = "ID")]
    pub(crate) pinterest_client_id: Option<String>,
    /// Its app secret.
    #[arg(
        long,
        env = "LEADTRACK_PINTEREST_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub(crate) pinterest_client_secret: Option<String>,
    /// The Meta app's id, for "Connect with Meta" (Facebook Login).
    #[arg(long, env = "LEADTRACK_META_APP_ID", value_name = "ID")]
    pub(crate) meta_app_id: Option<String>,
    /// The Meta app's secret.
    #[arg(
        long,
        env = "LEADTRACK_META_APP_SECRET",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub(crate) meta_app_secret: Option<String>,
    /// The verify token of the Meta app's Lead Ads webhook (`/webhooks/meta/leadgen`), as
    /// typed into its subscription; with --meta-app-secret, the webhook is served.
    #[arg(
        long,
        env = "LEADTRACK_META_VERIFY_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub(crate) meta_verify_token: Option<String>,
}

/// What the platforms' applications give the server: signing in with them, and the lead
/// sources' webhooks.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    /// The applications people sign in with.
    pub(crate) oauth: Vec<OAuthApp>,
    /// The lead sources' settings.
    pub(crate) sources: leadtrack_sources::Config,
}

impl PlatformApps {
    /// These settings, each taken from `before` where it is not given here: a flag written
    /// before `serve` (`server --google-client-id ID serve`) counts as one after it.
    pub(crate) fn or(self, before: Self) -> Self {
        Self {
            google_client_id: self.google_client_id.or(before.google_client_id),
            google_client_secret: self.google_client_secret.or(before.google_client_secret),
            google_ads_developer_token: self
                .google_ads_developer_token
                .or(before.google_ads_developer_token),
            microsoft_client_id: self.microsoft_client_id.or(before.microsoft_client_id),
            microsoft_client_secret: self
                .microsoft_client_secret
                .or(before.microsoft_client_secret),
            microsoft_ads_developer_token: self
                .microsoft_ads_developer_token
                .or(before.microsoft_ads_developer_token),
            linkedin_client_id: self.linkedin_client_id.or(before.linkedin_client_id),
            linkedin_client_secret: self
                .linkedin_client_secret
                .or(before.linkedin_client_secret),
            reddit_client_id: self.reddit_client_id.or(before.reddit_client_id),
            reddit_client_secret: self.reddit_client_secret.or(before.reddit_client_secret),
            pinterest_client_id: self.pinterest_client_id.or(before.pinterest_client_id),
            pinterest_client_secret: self
                .pinterest_client_secret
                .or(before.pinterest_client_secret),
            meta_app_id: self.meta_app_id.or(before.meta_app_id),
            meta_app_secret: self.meta_app_secret.or(before.meta_app_secret),
            meta_verify_token: self.meta_verify_token.or(before.meta_verify_token),
        }
    }

    /// The applications and the lead sources' settings.
    ///
    /// Errors: as [`Self::apps`]; a verify token without the app secret.
    pub(crate) fn connections(&self) -> Result<Connections, Failure> {
        let meta = match (&self.meta_app_secret, &self.meta_verify_token) {
            (Some(secret), Some(token)) => Some(leadtrack_sources::MetaApp {
                app_secret: Secret::new(secret.trim()),
                verify_token: Secret::new(token.trim()),
            }),
            (None, Some(_)) => {
                return Err(Failure(
                    "--meta-verify-token needs --meta-app-secret, which signs Meta's posts"
                        .to_owned(),
                ));
            }
            _ => None,
        };
        Ok(Connections {
            oauth: self.apps()?,
            sources: leadtrack_sources::Config { meta },
        })
    }

    /// The applications given, each at the platform's own endpoints.
    ///
    /// Errors: a client id without its secret, or the other way round.
    pub(crate) fn apps(&self) -> Result<Vec<OAuthApp>, Failure> {
        let given = [
            (
                Provider::Google,
                &self.google_client_id,
                &self.google_client_secret,
                &self.google_ads_developer_token,
            ),
            (
                Provider::Microsoft,
                &self.microsoft_client_id,
                &self.microsoft_client_secret,
                &self.microsoft_ads_developer_token,
            ),
            (
                Provider::Linkedin,
                &self.linkedin_client_id,
                &self.linkedin_client_secret,
                &None,
            ),
            (
                Provider::Meta,
                &self.meta_app_id,
                &self.meta_app_secret,
                &None,
            ),
            (
                Provider::Reddit,
                &self.reddit_client_id,
                &self.reddit_client_secret,
                &None,
            ),
            (
                Provider::Pinterest,
                &self.pinterest_client_id,
                &self.pinterest_client_secret,
                &None,
            ),
        ];
        let mut apps = Vec::new();
        for (provider, id, secret, developer_token) in given {
            match (id, secret) {
                (Some(id), Some(secret)) => apps.push(OAuthApp {
                    provider,
                    client_id: id.clone(),
                    client_secret: Secret::new(secret.clone()),
                    developer_token: developer_token.clone().map(Secret::new),
                    endpoints: provider.endpoints(),
                }),
                (None, None) => {}
                _ => {
                    let (id, secret) = match provider {
                        Provider::Meta => ("app-id", "app-secret"),
                        _ => ("client-id", "client-secret"),
                    };
                    return Err(Failure(format!(
                        "--{provider}-{id} and --{provider}-{secret} go together: give both, or neither"
                    )));
                }
            }
        }
        Ok(apps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> PlatformApps {
        PlatformApps {
            google_client_id: None,
            google_client_secret: None,
            google_ads_developer_token: None,
            microsoft_client_id: None,
            microsoft_client_secret: None,
            microsoft_ads_developer_token: None,
            linkedin_client_id: None,
            linkedin_client_secret: None,
            reddit_client_id: None,
            reddit_client_secret: None,
            pinterest_client_id: None,
            pinterest_client_secret: None,
            meta_app_id: None,
            meta_app_secret: None,
            meta_verify_token: None,
        }
    }

    #[test]
    fn an_application_needs_its_id_and_its_secret() {
        assert!(none().apps().unwrap().is_empty());
        let google = PlatformApps {
            google_client_id: Some("id".into()),
            google_client_secret: Some("secret".into()),
            google_ads_developer_token: Some("dev".into()),
            ..none()
        };
        let apps = google.apps().unwrap();
        assert_eq!(apps.len(), 1);
        assert_eq!(apps[0].provider, Provider::Google);
        assert_eq!(apps[0].developer_token.as_ref().unwrap().expose(), "dev");
        assert_eq!(apps[0].endpoints, Provider::Google.endpoints());
        let half = PlatformApps {
            linkedin_client_id: Some("id".into()),
            ..none()
        };
        let err = half.apps().unwrap_err().0;
        assert!(
            err.contains("--linkedin-client-id and --linkedin-client-secret"),
            "{err}"
        );
        let meta = PlatformApps {
            meta_app_secret: Some("secret".into()),
            ..none()
        };
        let err = meta.apps().unwrap_err().0;
        assert!(err.contains("--meta-app-id and --meta-app-secret"), "{err}");
    }
}
