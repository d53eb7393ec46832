//! OAuth 2.0 access tokens from a refresh token (RFC 6749 section 6), as Google, Microsoft
//! and LinkedIn issue them, cached until shortly before they expire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::normalize;
use crate::outcome::{self, Answer, Outcome};

/// A refresh-token grant: where to ask, and with what.
pub(crate) struct RefreshGrant<'a> {
    /// The token endpoint.
    pub(crate) token_url: &'a str,
    /// The application's client id.
    pub(crate) client_id: &'a str,
    /// Its secret; public clients (Microsoft's desktop applications) have none.
    pub(crate) client_secret: Option<&'a str>,
    /// The refresh token.
    pub(crate) refresh_token: &'a str,
    /// The scope to ask for, when the platform wants one named (Microsoft).
    pub(crate) scope: Option<&'a str>,
}

impl RefreshGrant<'_> {
    /// The cache key: the refresh token itself is not kept, its hash tells entries apart.
    fn key(&self) -> String {
        normalize::sha256_hex(&format!(
            "{}\n{}\n{}",
            self.token_url, self.client_id, self.refresh_token
        ))
    }

    /// The form posted to the token endpoint.
    fn form(&self) -> String {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "refresh_token")
            .append_pair("client_id", self.client_id);
        if let Some(secret) = self.client_secret {
            form.append_pair("client_secret", secret);
        }
        form.append_pair("refresh_token", self.refresh_token);
        if let Some(scope) = self.scope {
            form.append_pair("scope", scope);
        }
        form.finish()
    }

    /// The credentials, for scrubbing from error messages.
    fn secrets(&self) -> Vec<&str> {
        let mut secrets = vec![self.refresh_token];
        secrets.extend(self.client_secret);
        secrets
    }
}

/// Access tokens by token endpoint, client and refresh token, until shortly before they
/// expire. One refresh at a time per token: deliveries that need the same token while it
/// is being fetched wait for that fetch rather than each asking the endpoint.
///
/// A platform that rotates refresh tokens (Microsoft) sends a new one with each access
/// token; the cache keeps it, by the token it replaces, for the worker to store.
#[derive(Default)]
pub(crate) struct TokenCache {
    tokens: Mutex<HashMap<String, (String, Instant)>>,
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    rotated: Mutex<HashMap<String, String>>,
}

/// What a token endpoint answers.
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default = "default_expiry")]
    expires_in: u64,
    /// A new refresh token, from platforms that rotate them.
    #[serde(default)]
    refresh_token: Option<String>,
}

fn default_expiry() -> u64 {
    3600
}

/// Tokens are renewed this long before the platform says they expire.
const EXPIRY_MARGIN: Duration = Duration::from_secs(60);

impl TokenCache {
    fn cached(&self, key: &str) -> Option<String> {
        let tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        tokens
            .get(key)
            .filter(|(_, expires)| Instant::now() < *expires)
            .map(|(token, _)| token.clone())
    }

    /// The refresh token the platform issued in place of `old`, once.
    pub(crate) fn take_rotated(&self, old: &str) -> Option<String> {
        self.rotated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(old)
    }

    /// Drops the grant's token, which the platform no longer accepts.
    pub(crate) fn forget(&self, grant: &RefreshGrant<'_>) {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&grant.key());
    }

    /// A valid access token: the cached one, or a fresh one from the token endpoint.
    pub(crate) async fn token(
        &self,
        http: &reqwest::Client,
        grant: &RefreshGrant<'_>,
    ) -> Result<String, Outcome> {
        let key = grant.key();
        if let Some(token) = self.cached(&key) {
            return Ok(token);
        }
        let refresh = Arc::clone(
            self.refreshing
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(key.clone())
                .or_default(),
        );
        let _single_flight = refresh.lock().await;
        if let Some(token) = self.cached(&key) {
            return Ok(token);
        }
        let request = http
            .post(grant.token_url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(grant.form());
        let answer = outcome::send(request).await?;
        if !answer.is_success() {
            // 400 invalid_grant (revoked or expired consent) and 401 invalid_client are
            // permanent; 429 and 5xx are retried like any delivery.
            return Err(answer.by_status(|| {
                outcome::scrub(
                    format!(
                        "OAuth token refresh: HTTP {}: {}",
                        answer.status,
                        answer.snippet()
                    ),
                    &grant.secrets(),
                )
            }));
        }
        let token: TokenResponse =
            serde_json::from_slice(&answer.body).map_err(|_| Outcome::Retry {
                status: Some(answer.status),
                error: "OAuth token refresh: the answer holds no access_token".to_owned(),
                retry_after: None,
            })?;
        if let Some(rotated) = token.refresh_token.filter(|new| new != grant.refresh_token) {
            self.rotated
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(grant.refresh_token.to_owned(), rotated);
        }
        let lifetime = Duration::from_secs(token.expires_in).saturating_sub(EXPIRY_MARGIN);
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (token.access_token.clone(), Instant::now() + lifetime));
        Ok(token.access_token)
    }
}

/// Sends the request `request` makes with an access token of `grant`; when the platform
/// answers 401 (the token expired early, or was revoked), drops the token and sends once
/// more with a fresh one.
pub(crate) async fn send_authorized(
    http: &reqwest::Client,
    tokens: &TokenCache,
    grant: &RefreshGrant<'_>,
    request: impl Fn(&str) -> reqwest::RequestBuilder,
) -> Result<Answer, Outcome> {
    let token = tokens.token(http, grant).await?;
    let answer = outcome::send(request(&token)).await?;
    if answer.status != 401 {
        return Ok(answer);
    }
    tokens.forget(grant);
    let token = tokens.token(http, grant).await?;
    outcome::send(request(&token)).await
}
