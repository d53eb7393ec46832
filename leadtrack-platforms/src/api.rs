//! Reading a platform's account API on a sign-in's behalf: the grant's access token (shared
//! by every picker of the process), and the answer as JSON or an error in words.

use std::sync::OnceLock;

use leadtrack_core::oauth::{OAuthApp, OAuthGrant};
use leadtrack_core::target::Refusal;
use leadtrack_outbound::Outbound;

use crate::oauth::{RefreshGrant, TokenCache, send_authorized};
use crate::outcome::{self, Answer, Outcome};

/// An ad account a sign-in reaches, to pick where conversions go (Reddit's, whose id is
/// also its pixel's, and Pinterest's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdAccount {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
}

impl AdAccount {
    /// The accounts of `list` (objects with `id` and `name`), skipping any without either.
    pub(crate) fn all_in(list: &serde_json::Value) -> impl Iterator<Item = Self> + '_ {
        list.as_array().into_iter().flatten().filter_map(|account| {
            Some(Self {
                id: account["id"].as_str()?.to_owned(),
                name: account["name"].as_str()?.to_owned(),
            })
        })
    }
}

/// A platform's answer as JSON, or what went wrong in words, naming no secret.
pub(crate) fn json_answer(
    platform: &str,
    answer: &Answer,
    secrets: &[&str],
) -> Result<serde_json::Value, String> {
    if !answer.is_success() {
        return Err(outcome::scrub(
            format!(
                "{platform} answered HTTP {}: {}",
                answer.status,
                answer.snippet()
            ),
            secrets,
        ));
    }
    serde_json::from_slice(&answer.body)
        .map_err(|_| format!("{platform} answered something else than JSON"))
}

/// Sends the request `request` makes with an access token of the grant (refreshed with the
/// server's application as needed), and reads its JSON answer.
pub(crate) async fn with_grant(
    http: &Outbound,
    (app, grant): (&OAuthApp, &OAuthGrant),
    platform: &str,
    request: impl Fn(&str) -> Result<reqwest::RequestBuilder, Refusal>,
    secrets: &[&str],
) -> Result<serde_json::Value, String> {
    let refresh = RefreshGrant {
        token_url: &app.endpoints.token,
        client_id: &app.client_id,
        client_secret: Some(app.client_secret.expose()),
        refresh_token: grant.refresh_token.expose(),
        scope: None,
        auth: app.provider.client_auth(),
    };
    let answer = send_authorized(http, tokens(), &refresh, request)
        .await
        .map_err(|failed| failure(&failed))?;
    let mut secrets = secrets.to_vec();
    secrets.push(grant.refresh_token.expose());
    json_answer(platform, &answer, &secrets)
}

/// A failed request, in words.
pub(crate) fn failure(failed: &Outcome) -> String {
    match failed {
        Outcome::Retry { error, .. } | Outcome::Failed { error, .. } => error.clone(),
        Outcome::Delivered { .. } | Outcome::Skipped { .. } => "no answer".to_owned(),
    }
}

/// Access tokens of the pickers, shared by every request of the process.
fn tokens() -> &'static TokenCache {
    static TOKENS: OnceLock<TokenCache> = OnceLock::new();
    TOKENS.get_or_init(TokenCache::default)
}
