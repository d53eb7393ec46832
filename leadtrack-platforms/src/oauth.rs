//! OAuth 2.0 with the `oauth2` crate: the token endpoint's client, the consent request
//! with PKCE, and access tokens from a refresh token (RFC 6749 section 6), as Google,
//! Microsoft and LinkedIn issue them, cached until shortly before they expire.
//!
//! `oauth2` builds and reads the requests; the server's own `reqwest` client sends them
//! (`Exchange`), which also keeps the token endpoint's HTTP answer: only its status says
//! whether a failure is worth retrying.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leadtrack_core::integration::{Secret, SignedIn};
use leadtrack_core::oauth::{Authorization, ClientAuth, OAuthApp, Provider};
use leadtrack_core::target::Refusal;
use leadtrack_outbound::Outbound;
use oauth2::basic::{
    BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse,
    BasicTokenType,
};
use oauth2::{
    AccessToken, AuthType, AuthUrl, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet,
    HttpRequest, HttpResponse, PkceCodeChallenge, RefreshToken, Scope, StandardRevocableToken,
    TokenUrl,
};
use serde::{Deserialize, Serialize};

use crate::normalize;
use crate::outcome::{self, Answer, Outcome};

/// What a consent gave: who signed in, and the refresh token.
#[derive(Clone, Debug)]
pub struct Consent {
    /// Who signed in (the ID token's `email`, else its `sub`).
    pub account: String,
    /// The refresh token.
    pub refresh_token: Secret,
}

/// What a token endpoint answers. `oauth2`'s standard response requires `token_type`,
/// which LinkedIn's answers leave out; every token here is a bearer token.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct TokenAnswer {
    access_token: AccessToken,
    #[serde(default = "bearer")]
    token_type: BasicTokenType,
    #[serde(default)]
    expires_in: Option<u64>,
    /// A new refresh token (a code's first, or a rotated one).
    #[serde(default)]
    pub(crate) refresh_token: Option<RefreshToken>,
    /// OpenID Connect's ID token, which names who signed in.
    #[serde(default)]
    pub(crate) id_token: Option<String>,
    #[serde(skip)]
    scopes: Option<Vec<Scope>>,
}

fn bearer() -> BasicTokenType {
    BasicTokenType::Bearer
}

impl oauth2::TokenResponse for TokenAnswer {
    type TokenType = BasicTokenType;

    fn access_token(&self) -> &AccessToken {
        &self.access_token
    }

    fn token_type(&self) -> &BasicTokenType {
        &self.token_type
    }

    fn expires_in(&self) -> Option<Duration> {
        self.expires_in.map(Duration::from_secs)
    }

    fn refresh_token(&self) -> Option<&RefreshToken> {
        self.refresh_token.as_ref()
    }

    fn scopes(&self) -> Option<&Vec<Scope>> {
        self.scopes.as_ref()
    }
}

/// An `oauth2` client of one token endpoint, reading [`TokenAnswer`]s.
pub(crate) type Client<HasAuthUrl = EndpointNotSet> = oauth2::Client<
    BasicErrorResponse,
    TokenAnswer,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    HasAuthUrl,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
>;

/// The client of `token_url` for the application `client_id`, whose credentials go where
/// the platform wants them (`auth`).
pub(crate) fn client(
    token_url: &str,
    client_id: &str,
    client_secret: Option<&str>,
    auth: ClientAuth,
) -> Result<Client, String> {
    let token_url = TokenUrl::new(token_url.to_owned())
        .map_err(|_| "the token endpoint is not a URL".to_owned())?;
    let auth = match auth {
        ClientAuth::Form => AuthType::RequestBody,
        ClientAuth::Basic => AuthType::BasicAuth,
    };
    let client = oauth2::Client::new(ClientId::new(client_id.to_owned()))
        .set_auth_type(auth)
        .set_token_uri(token_url);
    Ok(match client_secret {
        Some(secret) => client.set_client_secret(ClientSecret::new(secret.to_owned())),
        None => client,
    })
}

/// A new consent request for `app`: fresh `state` and PKCE `S256` verifier (RFC 7636), the
/// answer going to `redirect_uri`, the scopes joined as the platform reads them. Google
/// hands out a refresh token only when asked for offline access with the consent screen
/// shown (`access_type=offline`, `prompt=consent`), Reddit only for a `permanent` grant
/// (<https://github.com/reddit-archive/reddit/wiki/OAuth2>, `duration`).
pub fn authorize(app: &OAuthApp, redirect_uri: &str) -> Result<Authorization, String> {
    let authorize = AuthUrl::new(app.endpoints.authorize.clone())
        .map_err(|_| "the consent page is not a URL".to_owned())?;
    let redirect = oauth2::RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|_| "the redirect address is not a URL".to_owned())?;
    let auth = app.provider.client_auth();
    let client = client(&app.endpoints.token, &app.client_id, None, auth)?
        .set_auth_uri(authorize)
        .set_redirect_uri(redirect);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let scopes = app.provider.scopes().join(app.provider.scope_separator());
    let mut request = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new(scopes))
        .set_pkce_challenge(challenge);
    match app.provider {
        Provider::Google => {
            request = request
                .add_extra_param("access_type", "offline")
                .add_extra_param("prompt", "consent");
        }
        Provider::Reddit => request = request.add_extra_param("duration", "permanent"),
        Provider::Microsoft | Provider::Linkedin | Provider::Meta | Provider::Pinterest => {}
    }
    let (url, state) = request.url();
    Ok(Authorization {
        url: url.into(),
        state: state.secret().clone(),
        verifier: verifier.secret().clone(),
    })
}

/// Why a request `oauth2` made got no answer; the [`Exchange`] keeps the outcome.
#[derive(Debug, thiserror::Error)]
#[error("the token endpoint did not answer")]
pub(crate) struct Unanswered;

/// Sends `oauth2`'s requests with `http`, keeping the last answer (or the failure to get
/// one) for [`Exchange::failure`].
pub(crate) struct Exchange<'a> {
    http: &'a Outbound,
    answered: Mutex<Result<Option<Answer>, Outcome>>,
}

impl<'a> Exchange<'a> {
    /// An exchange over `http`.
    pub(crate) fn new(http: &'a Outbound) -> Self {
        Self {
            http,
            answered: Mutex::new(Ok(None)),
        }
    }

    /// Sends one request.
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, Unanswered> {
        let (parts, body) = request.into_parts();
        let request = self
            .http
            .request(parts.method, &parts.uri.to_string())
            .map(|request| request.headers(parts.headers).body(body));
        let answer = outcome::send(request).await;
        let mut answered = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        let answer = match answer {
            Ok(answer) => answer,
            Err(failure) => {
                *answered = Err(failure);
                return Err(Unanswered);
            }
        };
        let response = http_response(&answer);
        *answered = Ok(Some(answer));
        response
    }

    /// What went wrong, once `oauth2` reported an error: no answer, an HTTP failure (by
    /// its status: 400 `invalid_grant` and 401 `invalid_client` are permanent, 429 and 5xx
    /// are retried), or a success without a token. `what` names the step; `secrets` are
    /// kept out of the message.
    pub(crate) fn failure(&self, what: &str, secrets: &[&str]) -> Outcome {
        let answered = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        match &*answered {
            Err(failure) => failure.clone(),
            Ok(Some(answer)) if !answer.is_success() => answer.by_status(|| {
                outcome::scrub(
                    format!("{what}: HTTP {}: {}", answer.status, answer.snippet()),
                    secrets,
                )
            }),
            Ok(answered) => Outcome::Retry {
                status: answered.as_ref().map(|answer| answer.status),
                error: format!("{what}: the answer holds no access_token"),
                retry_after: None,
            },
        }
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for Exchange<'_> {
    type Error = Unanswered;
    // Boxed and `Send`: the worker's deliveries run on spawned tasks.
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Unanswered>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.send(request))
    }
}

/// `answer` as the `http` response `oauth2` reads.
fn http_response(answer: &Answer) -> Result<HttpResponse, Unanswered> {
    let mut response = HttpResponse::new(answer.body.clone());
    *response.status_mut() =
        oauth2::http::StatusCode::from_u16(answer.status).map_err(|_| Unanswered)?;
    response.headers_mut().insert(
        oauth2::http::header::CONTENT_TYPE,
        oauth2::http::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// A refresh-token grant: where to ask, and with what.
pub struct RefreshGrant<'a> {
    /// The token endpoint.
    pub token_url: &'a str,
    /// The application's client id.
    pub client_id: &'a str,
    /// Its secret; public clients (Microsoft's desktop applications) have none.
    pub client_secret: Option<&'a str>,
    /// The refresh token.
    pub refresh_token: &'a str,
    /// The scope to ask for, when the platform wants one named (Microsoft).
    pub scope: Option<&'a str>,
    /// Where the application's credentials go.
    pub auth: ClientAuth,
}

impl<'a> RefreshGrant<'a> {
    /// The grant of what signing in with `provider` left an integration: at the platform's
    /// token endpoint unless it names another.
    pub fn signed_in(provider: Provider, signed_in: &'a SignedIn) -> Self {
        Self {
            token_url: signed_in
                .token_url
                .as_deref()
                .unwrap_or(provider.token_url()),
            client_id: &signed_in.client_id,
            client_secret: Some(signed_in.client_secret.expose()),
            refresh_token: signed_in.refresh_token.expose(),
            scope: None,
            auth: provider.client_auth(),
        }
    }
}

impl RefreshGrant<'_> {
    /// The cache key: the refresh token itself is not kept, its hash tells entries apart.
    fn key(&self) -> String {
        normalize::sha256_hex(&format!(
            "{}\n{}\n{}",
            self.token_url, self.client_id, self.refresh_token
        ))
    }

    /// The credentials, for scrubbing from error messages.
    fn secrets(&self) -> Vec<&str> {
        let mut secrets = vec![self.refresh_token];
        secrets.extend(self.client_secret);
        secrets
    }

    /// A fresh access token from the token endpoint.
    async fn fetch(&self, http: &Outbound) -> Result<TokenAnswer, Outcome> {
        const WHAT: &str = "OAuth token refresh";
        let client = client(
            self.token_url,
            self.client_id,
            self.client_secret,
            self.auth,
        )
        .map_err(|error| Outcome::Failed {
            status: None,
            error: format!("{WHAT}: {error}"),
        })?;
        let refresh_token = RefreshToken::new(self.refresh_token.to_owned());
        let mut request = client.exchange_refresh_token(&refresh_token);
        if let Some(scope) = self.scope {
            request = request.add_scopes(scope.split(' ').map(|s| Scope::new(s.to_owned())));
        }
        let exchange = Exchange::new(http);
        request
            .request_async(&exchange)
            .await
            .map_err(|_| exchange.failure(WHAT, &self.secrets()))
    }
}

/// Access tokens by token endpoint, client and refresh token, until shortly before they
/// expire. One refresh at a time per token: deliveries that need the same token while it
/// is being fetched wait for that fetch rather than each asking the endpoint.
///
/// A platform that rotates refresh tokens (Microsoft) sends a new one with each access
/// token; the cache keeps it, by the token it replaces, for the worker to store.
#[derive(Default)]
pub struct TokenCache {
    tokens: Mutex<HashMap<String, (String, Instant)>>,
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    rotated: Mutex<HashMap<String, String>>,
}

/// How long a token lives when the endpoint does not say.
const DEFAULT_EXPIRY: Duration = Duration::from_secs(3600);

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
    pub fn take_rotated(&self, old: &str) -> Option<String> {
        self.rotated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(old)
    }

    /// Drops the grant's token, which the platform no longer accepts.
    pub fn forget(&self, grant: &RefreshGrant<'_>) {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&grant.key());
    }

    /// A valid access token: the cached one, or a fresh one from the token endpoint.
    pub async fn token(
        &self,
        http: &Outbound,
        grant: &RefreshGrant<'_>,
    ) -> Result<String, Outcome> {
        use oauth2::TokenResponse as _;
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
        let token = grant.fetch(http).await?;
        let rotated = token.refresh_token.as_ref().map(|new| new.secret());
        if let Some(rotated) = rotated.filter(|new| *new != grant.refresh_token) {
            self.rotated
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(grant.refresh_token.to_owned(), rotated.clone());
        }
        let lifetime = token
            .expires_in()
            .unwrap_or(DEFAULT_EXPIRY)
            .saturating_sub(EXPIRY_MARGIN);
        let access = token.access_token().secret().clone();
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (access.clone(), Instant::now() + lifetime));
        Ok(access)
    }
}

/// Sends the request `request` makes with an access token of `grant`; when the platform
/// answers 401 (the token expired early, or was revoked), drops the token and sends once
/// more with a fresh one.
pub async fn send_authorized(
    http: &Outbound,
    tokens: &TokenCache,
    grant: &RefreshGrant<'_>,
    request: impl Fn(&str) -> Result<reqwest::RequestBuilder, Refusal>,
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

/// Sends the request `request` makes with a bearer token: the settings' `access_token`, or,
/// when a sign-in with `provider` connected them, one renewed from its refresh token
/// ([`send_authorized`]).
pub async fn send_with_token(
    http: &Outbound,
    tokens: &TokenCache,
    (provider, signed_in): (Provider, Option<&SignedIn>),
    access_token: &Secret,
    request: impl Fn(&str) -> Result<reqwest::RequestBuilder, Refusal>,
) -> Result<Answer, Outcome> {
    match signed_in {
        Some(signed_in) => {
            let grant = RefreshGrant::signed_in(provider, signed_in);
            send_authorized(http, tokens, &grant, request).await
        }
        None => outcome::send(request(access_token.expose())).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn app(provider: Provider) -> OAuthApp {
        OAuthApp {
            provider,
            client_id: "client-1".to_owned(),
            client_secret: Secret::new("shh"),
            developer_token: None,
            endpoints: provider.endpoints(),
        }
    }

    #[test]
    fn a_consent_request_asks_for_a_code_with_state_and_pkce() {
        let asked = authorize(
            &app(Provider::Google),
            "https://leads.example.com/oauth/callback",
        )
        .unwrap();
        let (page, query) = asked.url.split_once('?').unwrap();
        assert_eq!(page, "https://accounts.google.com/o/oauth2/v2/auth");
        let query: HashMap<_, _> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        assert_eq!(query["response_type"], "code");
        assert_eq!(query["client_id"], "client-1");
        assert_eq!(
            query["redirect_uri"],
            "https://leads.example.com/oauth/callback"
        );
        assert!(query["scope"].contains("https://www.googleapis.com/auth/datamanager"));
        assert_eq!(query["state"], asked.state);
        // RFC 7636 section 4.2, by hand: the URL-safe base64 of the verifier's SHA-256.
        let challenge = {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(asked.verifier.as_bytes()))
        };
        assert_eq!(query["code_challenge"], challenge);
        assert_eq!(query["code_challenge_method"], "S256");
        assert_eq!(query["access_type"], "offline");
        assert!(!asked.url.contains("shh"));
        let again = authorize(&app(Provider::Google), "https://x").unwrap();
        assert_ne!(again.state, asked.state);
        assert_ne!(again.verifier, asked.verifier);
        let linkedin = authorize(&app(Provider::Linkedin), "https://x").unwrap();
        assert!(!linkedin.url.contains("access_type"));
        assert!(linkedin.url.contains("rw_conversions"));
        // Pinterest reads its scopes comma-separated; Reddit gives a refresh token only to a
        // permanent grant.
        let pinterest = authorize(&app(Provider::Pinterest), "https://x").unwrap();
        assert!(pinterest.url.ends_with("&scope=ads%3Aread%2Cads%3Awrite"));
        let reddit = authorize(&app(Provider::Reddit), "https://x").unwrap();
        assert!(reddit.url.contains("&scope=adsconversions+adsread"));
        assert!(reddit.url.contains("&duration=permanent"));
    }
}
