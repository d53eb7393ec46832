//! A stand-in for Google's sign-in and the Google Ads API, checking their documented rules:
//! the consent page of "Using OAuth 2.0 for Web Server Applications"
//! (<https://developers.google.com/identity/protocols/oauth2/web-server>), the token
//! endpoint's code exchange with PKCE (RFC 7636 section 4.6: the verifier's `S256` must be
//! the challenge) and refresh, and the two Google Ads calls the pickers make
//! (`customers:listAccessibleCustomers`, and `googleAds:search` over `customer` and
//! `conversion_action`), which need a bearer token and the `developer-token` header.
//!
//! [`MockSignIn::start_as`] stands for Microsoft's or LinkedIn's sign-in, which follow the
//! same RFCs (their consent asks for their own scopes, without Google's `access_type`), or
//! for Meta's: its token endpoint is a GET, with no refresh token but a short-lived token to
//! exchange for a long-lived one
//! (<https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow>),
//! and the Graph API lists the ad accounts and their pixels. As LinkedIn's, it also lists
//! the ad accounts and their conversion rules (`/rest/adAccounts`, `/rest/conversions`,
//! which want the `LinkedIn-Version` header). As Microsoft's, it answers the REST calls of
//! Customer Management (`User/Query`, `Accounts/Search`) and Campaign Management
//! (`ConversionGoals/QueryByIds`), which want the `DeveloperToken` header, and the account's
//! `CustomerId` and `CustomerAccountId` for the latter
//! (<https://learn.microsoft.com/en-us/advertising/guides/get-started?view=bingads-13>).
//! As Reddit's, its consent wants `duration=permanent` and its token endpoint the
//! application's credentials in a Basic `Authorization` header
//! (<https://github.com/reddit-archive/reddit/wiki/OAuth2>), and it lists the businesses and
//! their ad accounts (`/api/v3/me/businesses`, `/api/v3/businesses/{id}/ad_accounts`). As
//! Pinterest's, its consent reads the scopes comma-separated, its token endpoint wants Basic
//! credentials
//! (<https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/>),
//! and it lists the ad accounts (`/v5/ad_accounts`). As Microsoft's and LinkedIn's, it also
//! answers their reporting APIs (`super::reports`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use leadtrack_core::oauth::{ClientAuth, Endpoints, Provider};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use warp::Filter;
use warp::filters::BoxedFilter;

use super::reports;

use super::serve;
use warp::http::StatusCode;
use warp::reply::{Reply, Response};

/// The PKCE `S256` challenge of `verifier`: the URL-safe base64 of its SHA-256 (RFC 7636
/// section 4.2), computed here by hand so that the mock checks the client independently.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The refresh token the mock hands out.
pub const REFRESH_TOKEN: &str = "mock-google-refresh-token";
/// The account that signs in.
pub const ACCOUNT: &str = "ads-owner@example.com";
/// The customers the account reaches: (id, name, manager).
pub const CUSTOMERS: [(&str, &str, bool); 2] = [
    ("1234567890", "Acme Shop", false),
    ("5550001111", "Acme Agency", true),
];
/// Meta's long-lived user token, what its grant keeps.
pub const META_TOKEN: &str = "mock-meta-long-lived-token";
/// Who signs in with Meta.
pub const META_NAME: &str = "Ada Marketer";
/// Meta's ad account and its pixel: (account id, account name, pixel id, pixel name).
pub const META_PIXEL: (&str, &str, &str, &str) = ("111", "Acme Ads", "999", "Acme Pixel");
/// The Facebook page the Meta account manages: (id, name, page token).
pub const META_PAGE: (&str, &str, &str) = ("1234567890", "Acme Page", "mock-page-token");
/// LinkedIn's ad account and its conversion rule: (account id, account name, rule id, rule
/// name).
pub const LINKEDIN_RULE: (i64, &str, i64, &str) = (507, "Acme Sponsored", 8801, "Demo booked");
/// The client account under the manager of [`CUSTOMERS`], reached only through it (with
/// its `login-customer-id`): (id, name).
pub const MANAGED_CLIENT: (&str, &str) = ("7770002222", "Acme Franchise");
/// The Microsoft Advertising user who signs in, by id.
pub const MICROSOFT_USER: i64 = 42;
/// The Microsoft Advertising account that user reaches: (customer id, account id, name,
/// number).
pub const MICROSOFT_ACCOUNT: (i64, i64, &str, &str) =
    (3_330_001, 4_440_002, "Acme Search", "F100AB");
/// The account's conversion goals: (name, type, status). The pickers list the active
/// offline ones.
pub const MICROSOFT_GOALS: [(&str, &str, &str); 4] = [
    ("Offline sale", "OfflineConversion", "Active"),
    ("Offline qualified", "OfflineConversion", "Active"),
    ("Old offline", "OfflineConversion", "Paused"),
    ("Newsletter", "Event", "Active"),
];
/// Reddit's business and its ad account: (business id, account id, account name).
pub const REDDIT_ACCOUNT: (&str, &str, &str) = ("biz-7", "a2_acme42", "Acme on Reddit");
/// Pinterest's ad account: (id, name).
pub const PINTEREST_ACCOUNT: (&str, &str) = ("549755885175", "Acme Pins");
/// What Meta's campaigns of [`META_PIXEL`]'s ad account spend each day, in euros:
/// (campaign id, name, spend, clicks).
pub const META_SPEND: [(&str, &str, &str, u64); 2] = [
    ("2385", "Spring Sale", "132.45", 241),
    ("2386", "Retargeting", "20", 12),
];
/// What Google Ads' campaigns of the first customer cost each day, in dollars: (campaign
/// id, name, cost in micros, clicks); the last spent nothing.
pub const GOOGLE_SPEND: [(u64, &str, i64, u64); 3] = [
    (111, "Brand search", 184_050_000, 91),
    (222, "Competitors", 64_000_000, 30),
    (333, "Paused", 0, 0),
];
/// The upload-click conversion actions of the first customer: (id, name).
pub const CONVERSION_ACTIONS: [(&str, &str); 2] =
    [("111", "Qualified lead"), ("222", "Closed deal")];

/// A consent asked for and not yet exchanged.
struct Pending {
    challenge: String,
    redirect_uri: String,
}

#[derive(Default)]
struct State {
    /// Codes handed out, by code.
    codes: HashMap<String, Pending>,
    /// Every form posted to the token endpoint.
    token_requests: Vec<HashMap<String, String>>,
    /// Access tokens handed out.
    access_tokens: Vec<String>,
    /// Microsoft's report requests polled once already.
    polled_reports: std::collections::HashSet<String>,
}

/// What the mock expects of the server's registered application.
#[derive(Clone)]
struct App {
    provider: Provider,
    client_id: String,
    client_secret: String,
    developer_token: String,
}

/// The mock: Google's consent page and token endpoint, and the Google Ads API.
pub struct MockSignIn {
    url: String,
    state: Arc<Mutex<State>>,
    _stop: oneshot::Sender<()>,
}

impl MockSignIn {
    /// Starts the mock on a free loopback port, for the application `client_id` with
    /// `client_secret`, and the developer token `developer_token`; it stops when dropped.
    pub async fn start(client_id: &str, client_secret: &str, developer_token: &str) -> Self {
        Self::start_as(Provider::Google, client_id, client_secret, developer_token).await
    }

    /// [`MockSignIn::start`], as `provider`'s sign-in.
    pub async fn start_as(
        provider: Provider,
        client_id: &str,
        client_secret: &str,
        developer_token: &str,
    ) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let app = App {
            provider,
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            developer_token: developer_token.to_owned(),
        };
        let routes = routes(Arc::clone(&state), app);
        let (url, stop) = serve(routes).await;
        Self {
            url,
            state,
            _stop: stop,
        }
    }

    /// Where the mock's consent page, token endpoint and API are.
    pub fn endpoints(&self) -> Endpoints {
        Endpoints {
            authorize: format!("{}/o/oauth2/v2/auth", self.url),
            token: format!("{}/token", self.url),
            api: self.url.clone(),
        }
    }

    /// Hands out `token` as a sign-in would have: the mock's APIs take it from now on.
    pub fn issue(&self, token: &str) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .access_tokens
            .push(token.to_owned());
    }

    /// Every form posted to the token endpoint, in order.
    pub fn token_requests(&self) -> Vec<HashMap<String, String>> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .token_requests
            .clone()
    }
}

/// The mock's routes, in the order they are tried; what none takes is `404 NOT_FOUND`.
fn routes(
    state: Arc<Mutex<State>>,
    app: App,
) -> impl Filter<Extract = (Response,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static
{
    let shared = (state, app);
    sign_in_routes(&shared)
        .or(api_routes(&shared))
        .unify()
        .recover(|_| async {
            Ok::<_, std::convert::Infallible>(error(StatusCode::NOT_FOUND, "NOT_FOUND"))
        })
        .unify()
}

/// What each route reads of the mock: its state and the app signing in.
type Shared = (Arc<Mutex<State>>, App);

/// The mock's state and app, to each request.
fn sharing(
    shared: &Shared,
) -> impl Filter<Extract = (Shared,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static
{
    let shared = shared.clone();
    warp::any().map(move || shared.clone())
}

/// Signing in: the consent page, the token endpoints, the ad accounts a token may see, and
/// Microsoft's report files.
fn sign_in_routes(shared: &Shared) -> BoxedFilter<(Response,)> {
    let with = || sharing(shared);
    let consent = warp::get()
        .and(warp::path!("o" / "oauth2" / "v2" / "auth"))
        .and(warp::query::<HashMap<String, String>>())
        .and(with())
        .map(
            |query: HashMap<String, String>, (state, app): (Arc<Mutex<State>>, App)| {
                consent_page(&state, &app, &query)
            },
        );
    let report_files = warp::get()
        .and(warp::path!("reports" / String))
        .map(|file: String| reports::microsoft_report(&file));
    let token = warp::post()
        .and(warp::path!("token"))
        .and(warp::header::optional::<String>("authorization"))
        .and(warp::body::form::<HashMap<String, String>>())
        .and(with())
        .map(
            |basic: Option<String>,
             form: HashMap<String, String>,
             (state, app): (Arc<Mutex<State>>, App)| {
                token_endpoint(&state, &app, basic.as_deref(), form)
            },
        );
    let accounts = warp::get()
        .and(warp::path::full())
        .and(warp::header::optional::<String>("authorization"))
        .and(with())
        .and_then(
            |path: warp::path::FullPath,
             auth: Option<String>,
             (state, _): (Arc<Mutex<State>>, App)| async move {
                let body = ad_accounts(path.as_str()).ok_or_else(warp::reject::not_found)?;
                let bearer = auth
                    .as_deref()
                    .and_then(|auth| auth.strip_prefix("Bearer "));
                if !issued(&state, bearer) {
                    return Ok(error(StatusCode::UNAUTHORIZED, "invalid_token"));
                }
                Ok::<_, warp::Rejection>(warp::reply::json(&body).into_response())
            },
        );
    let meta_token = warp::get()
        .and(warp::path!("token"))
        .and(warp::query::<HashMap<String, String>>())
        .and(with())
        .map(
            |query: HashMap<String, String>, (state, app): (Arc<Mutex<State>>, App)| {
                meta_token_endpoint(&state, &app, query)
            },
        );
    consent
        .or(report_files)
        .unify()
        .or(token)
        .unify()
        .or(accounts)
        .unify()
        .or(meta_token)
        .unify()
        .boxed()
}

/// The platforms' APIs a signed-in client calls: Meta's Graph API (and its page
/// subscriptions), LinkedIn's REST API, Google Ads' and Microsoft Advertising's.
fn api_routes(shared: &Shared) -> BoxedFilter<(Response,)> {
    let with = || sharing(shared);
    let rest = warp::get()
        .and(warp::path("rest"))
        .and(warp::path::tail())
        .and(warp::query::<HashMap<String, String>>())
        .and(warp::header::optional::<String>("authorization"))
        .and(warp::header::optional::<String>("linkedin-version"))
        .and(with())
        .map(
            |tail: warp::path::Tail,
             query: HashMap<String, String>,
             auth: Option<String>,
             version: Option<String>,
             (state, _): (Arc<Mutex<State>>, App)| {
                let bearer = auth
                    .as_deref()
                    .and_then(|auth| auth.strip_prefix("Bearer "));
                if !issued(&state, bearer) {
                    return error(StatusCode::UNAUTHORIZED, "INVALID_ACCESS_TOKEN");
                }
                if version.is_none_or(|v| v.len() != 6) {
                    return error(StatusCode::BAD_REQUEST, "VERSION_MISSING");
                }
                linkedin_rest(tail.as_str(), &query)
            },
        );
    let api = warp::path("v21")
        .and(warp::path::tail())
        .and(warp::header::optional::<String>("authorization"))
        .and(warp::header::optional::<String>("developer-token"))
        .and(warp::header::optional::<String>("login-customer-id"))
        .and(warp::body::bytes())
        .and(with())
        .map(
            |tail: warp::path::Tail,
             auth: Option<String>,
             developer: Option<String>,
             login: Option<String>,
             body: bytes::Bytes,
             (state, app): (Arc<Mutex<State>>, App)| {
                let bearer = auth
                    .as_deref()
                    .and_then(|auth| auth.strip_prefix("Bearer "));
                if !issued(&state, bearer) {
                    return error(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED");
                }
                if developer.as_deref() != Some(app.developer_token.as_str()) {
                    return error(StatusCode::UNAUTHORIZED, "DEVELOPER_TOKEN_INVALID");
                }
                google_ads(
                    tail.as_str(),
                    &serde_json::from_slice(&body).unwrap_or(Value::Null),
                    login.as_deref(),
                )
            },
        );
    let microsoft = warp::post()
        .and(warp::path::tail())
        .and(warp::header::headers_cloned())
        .and(warp::body::bytes())
        .and(with())
        .map(
            |tail: warp::path::Tail,
             headers: warp::http::HeaderMap,
             body: bytes::Bytes,
             (state, app): (Arc<Mutex<State>>, App)| {
                let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
                let bearer = header("authorization").and_then(|auth| auth.strip_prefix("Bearer "));
                if !issued(&state, bearer) {
                    return error(StatusCode::UNAUTHORIZED, "AuthenticationTokenExpired");
                }
                if header("developertoken") != Some(app.developer_token.as_str()) {
                    return error(StatusCode::UNAUTHORIZED, "InvalidDeveloperToken");
                }
                let account = (header("customerid"), header("customeraccountid"));
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                let polled = (
                    &mut state.polled_reports,
                    header("host").unwrap_or_default(),
                );
                let (customer_id, account_id, ..) = MICROSOFT_ACCOUNT;
                let ids = ((customer_id, account_id), account);
                reports::microsoft(tail.as_str(), ids, &body, polled)
                    .unwrap_or_else(|| microsoft_rest(tail.as_str(), account, &body))
            },
        );
    meta_routes(shared)
        .or(rest)
        .unify()
        .or(api)
        .unify()
        .or(microsoft)
        .unify()
        .boxed()
}

/// Meta's Graph API: what a token may read (and the insights), and a page's subscription to
/// its leads.
fn meta_routes(shared: &Shared) -> BoxedFilter<(Response,)> {
    let with = || sharing(shared);
    let graph = warp::get()
        .and(warp::path("v23.0"))
        .and(warp::path::tail())
        .and(warp::query::<HashMap<String, String>>())
        .and(warp::header::<String>("host"))
        .and(with())
        .map(
            |tail: warp::path::Tail,
             query: HashMap<String, String>,
             host: String,
             (state, _): (Arc<Mutex<State>>, App)| {
                if !issued(&state, query.get("access_token").map(String::as_str)) {
                    return error(StatusCode::UNAUTHORIZED, "OAuthException");
                }
                if tail.as_str().ends_with("/insights") {
                    return meta_insights(tail.as_str(), &query, &host);
                }
                meta_graph(tail.as_str())
            },
        );
    // Subscribing the app to a page's leads, with the page's own token.
    let subscribe = warp::post()
        .and(warp::path!("v23.0" / String / "subscribed_apps"))
        .and(warp::query::<HashMap<String, String>>())
        .map(|page: String, query: HashMap<String, String>| {
            let (id, _, token) = META_PAGE;
            let get = |name: &str| query.get(name).map(String::as_str);
            if page != id || get("access_token") != Some(token) {
                return error(StatusCode::BAD_REQUEST, "OAuthException");
            }
            if get("subscribed_fields") != Some("leadgen") {
                return error(StatusCode::BAD_REQUEST, "subscribed_fields");
            }
            warp::reply::json(&json!({"success": true})).into_response()
        });
    graph.or(subscribe).unify().boxed()
}

/// Whether the mock handed out the access token `token`.
fn issued(state: &Mutex<State>, token: Option<&str>) -> bool {
    token.is_some_and(|token| {
        state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .access_tokens
            .iter()
            .any(|issued| issued == token)
    })
}

fn error(status: StatusCode, reason: &str) -> Response {
    warp::reply::with_status(warp::reply::json(&json!({"error": reason})), status).into_response()
}

/// The consent page: the request checked, then "Allow" and "Deny" links back to the
/// redirect URI, as Google's page sends the browser back.
fn consent_page(state: &Mutex<State>, app: &App, query: &HashMap<String, String>) -> Response {
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let scope = get("scope");
    let separator = app.provider.scope_separator();
    let valid = get("response_type") == "code"
        && get("client_id") == app.client_id
        && !get("state").is_empty()
        && get("code_challenge_method") == "S256"
        && get("code_challenge").len() == 43
        && (app.provider != Provider::Google || get("access_type") == "offline")
        && (app.provider != Provider::Reddit || get("duration") == "permanent")
        && app
            .provider
            .scopes()
            .iter()
            .all(|asked| scope.split(separator).any(|s| s == *asked));
    if !valid || !get("redirect_uri").starts_with("http") {
        return error(StatusCode::BAD_REQUEST, "invalid_request");
    }
    let code = format!(
        "code-{}",
        URL_SAFE_NO_PAD.encode(leadtrack_core::types::random_bytes::<9>())
    );
    state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .codes
        .insert(
            code.clone(),
            Pending {
                challenge: get("code_challenge").to_owned(),
                redirect_uri: get("redirect_uri").to_owned(),
            },
        );
    let back = |pairs: &[(&str, &str)]| {
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        format!("{}?{query}", get("redirect_uri"))
    };
    let allow = back(&[("code", &code), ("state", get("state")), ("scope", scope)]);
    let deny = back(&[("error", "access_denied"), ("state", get("state"))]);
    warp::reply::html(format!(
        "<!doctype html><title>Sign in - Google Accounts</title><main><h1>leadtrack wants to access your Google Account</h1>\
         <a id=\"allow\" href=\"{allow}\">Allow</a> <a id=\"deny\" href=\"{deny}\">Cancel</a></main>"
    ))
    .into_response()
}

/// The application's credentials as a token request gives them: in a Basic header for the
/// platforms that want that (with none in the form), else in the form.
fn credentials(
    app: &App,
    basic: Option<&str>,
    form: &HashMap<String, String>,
) -> Option<(String, String)> {
    if app.provider.client_auth() == ClientAuth::Form {
        return Some((
            form.get("client_id")?.clone(),
            form.get("client_secret")?.clone(),
        ));
    }
    if form.contains_key("client_secret") {
        return None;
    }
    let decoded = STANDARD.decode(basic?.strip_prefix("Basic ")?).ok()?;
    let (id, secret) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    // RFC 6749 section 2.3.1: each is form-urlencoded before it is joined.
    let unescape = |part: &str| {
        form_urlencoded::parse(format!("v={part}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())
    };
    Some((unescape(id)?, unescape(secret)?))
}

/// The token endpoint: a code (once, with its redirect URI and PKCE verifier) or the
/// refresh token, for the application's credentials.
fn token_endpoint(
    state: &Mutex<State>,
    app: &App,
    basic: Option<&str>,
    form: HashMap<String, String>,
) -> Response {
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.token_requests.push(form.clone());
    let get = |name: &str| form.get(name).map(String::as_str).unwrap_or_default();
    if credentials(app, basic, &form) != Some((app.client_id.clone(), app.client_secret.clone())) {
        return error(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    let access = format!("mock-access-{}", state.access_tokens.len() + 1);
    match get("grant_type") {
        "authorization_code" => {
            let Some(pending) = state.codes.remove(get("code")) else {
                return error(StatusCode::BAD_REQUEST, "invalid_grant");
            };
            if pending.redirect_uri != get("redirect_uri")
                || pkce_challenge(get("code_verifier")) != pending.challenge
            {
                return error(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            state.access_tokens.push(access.clone());
            let claims = URL_SAFE_NO_PAD.encode(json!({"sub": "42", "email": ACCOUNT}).to_string());
            warp::reply::json(&json!({
                "access_token": access,
                "expires_in": 3599,
                "refresh_token": REFRESH_TOKEN,
                "id_token": format!("eyJhbGciOiJSUzI1NiJ9.{claims}.signature"),
                "token_type": "Bearer",
            }))
            .into_response()
        }
        "refresh_token" if get("refresh_token") == REFRESH_TOKEN => {
            state.access_tokens.push(access.clone());
            warp::reply::json(&json!({"access_token": access, "expires_in": 3599})).into_response()
        }
        _ => error(StatusCode::BAD_REQUEST, "invalid_grant"),
    }
}

/// Meta's token endpoint (a GET): a code, once, for a short-lived token; a short-lived
/// token for the long-lived one.
fn meta_token_endpoint(
    state: &Mutex<State>,
    app: &App,
    query: HashMap<String, String>,
) -> Response {
    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.token_requests.push(query.clone());
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    if app.provider != Provider::Meta
        || get("client_id") != app.client_id
        || get("client_secret") != app.client_secret
    {
        return error(StatusCode::BAD_REQUEST, "OAuthException");
    }
    if get("grant_type") == "fb_exchange_token" {
        if !state
            .access_tokens
            .iter()
            .any(|token| token == get("fb_exchange_token"))
        {
            return error(StatusCode::BAD_REQUEST, "OAuthException");
        }
        state.access_tokens.push(META_TOKEN.to_owned());
        return warp::reply::json(
            &json!({"access_token": META_TOKEN, "token_type": "bearer", "expires_in": 5_183_944}),
        )
        .into_response();
    }
    let Some(pending) = state.codes.remove(get("code")) else {
        return error(StatusCode::BAD_REQUEST, "OAuthException");
    };
    if pending.redirect_uri != get("redirect_uri")
        || pkce_challenge(get("code_verifier")) != pending.challenge
    {
        return error(StatusCode::BAD_REQUEST, "OAuthException");
    }
    let short = format!("mock-meta-short-{}", state.access_tokens.len() + 1);
    state.access_tokens.push(short.clone());
    warp::reply::json(&json!({"access_token": short, "token_type": "bearer", "expires_in": 3600}))
        .into_response()
}

/// The Graph API's answers: who signed in, the ad accounts, and their pixels.
fn meta_graph(path: &str) -> Response {
    let (account, account_name, pixel, pixel_name) = META_PIXEL;
    let body = match path {
        "me" => json!({"id": "10", "name": META_NAME}),
        "me/accounts" => {
            let (id, name, token) = META_PAGE;
            json!({"data": [{"id": id, "name": name, "access_token": token, "category": "Shopping"}]})
        }
        "me/adaccounts" => {
            json!({"data": [{"id": format!("act_{account}"), "account_id": account, "name": account_name}]})
        }
        _ if path == format!("act_{account}/adspixels") => {
            json!({"data": [{"id": pixel, "name": pixel_name}]})
        }
        _ => return error(StatusCode::NOT_FOUND, "GraphMethodException"),
    };
    warp::reply::json(&body).into_response()
}

/// Reddit's and Pinterest's lists of ad accounts, by path.
fn ad_accounts(path: &str) -> Option<Value> {
    let (business, reddit_id, reddit_name) = REDDIT_ACCOUNT;
    let (pinterest_id, pinterest_name) = PINTEREST_ACCOUNT;
    Some(match path {
        "/api/v3/me/businesses" => json!({"data": [{"id": business, "name": "Acme"}]}),
        _ if path == format!("/api/v3/businesses/{business}/ad_accounts") => {
            json!({"data": [{"id": reddit_id, "name": reddit_name, "currency": "USD"}]})
        }
        "/v5/ad_accounts" => json!({
            "items": [{"id": pinterest_id, "name": pinterest_name, "currency": "USD"}],
            "bookmark": null,
        }),
        _ => return None,
    })
}

/// The days of a `from`..`to` range given as `YYYY-MM-DD` text, first to last.
fn days_between(from: &str, to: &str) -> Vec<String> {
    let parse = |day: &str| chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok();
    let (Some(from), Some(to)) = (parse(from), parse(to)) else {
        return Vec::new();
    };
    from.iter_days()
        .take_while(|day| *day <= to)
        .map(|day| day.to_string())
        .collect()
}

/// Meta's Insights of the known ad account, by campaign and day as asked
/// (`level=campaign`, `time_increment=1`, the fields read, a `time_range`): each day of
/// the range, [`META_SPEND`]'s campaigns, one day a page (`paging.next` to the next).
fn meta_insights(path: &str, query: &HashMap<String, String>, host: &str) -> Response {
    let (account, ..) = META_PIXEL;
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let fields = get("fields");
    let asked = path == format!("act_{account}/insights")
        && get("level") == "campaign"
        && get("time_increment") == "1"
        && ["campaign_id", "campaign_name", "spend", "account_currency"]
            .iter()
            .all(|field| fields.split(',').any(|f| f == *field));
    let range: Value = serde_json::from_str(get("time_range")).unwrap_or(Value::Null);
    let days = days_between(
        range["since"].as_str().unwrap_or_default(),
        range["until"].as_str().unwrap_or_default(),
    );
    if !asked || days.is_empty() {
        return error(StatusCode::BAD_REQUEST, "OAuthException");
    }
    let page: usize = get("after").parse().unwrap_or(0);
    let Some(day) = days.get(page) else {
        return warp::reply::json(&json!({"data": []})).into_response();
    };
    let data: Vec<Value> = META_SPEND
        .iter()
        .map(|(id, name, spend, clicks)| {
            json!({"campaign_id": id, "campaign_name": name, "spend": spend,
                   "clicks": clicks.to_string(), "impressions": "1000",
                   "account_currency": "EUR", "date_start": day, "date_stop": day})
        })
        .collect();
    let mut body = json!({"data": data, "paging": {"cursors": {"after": (page + 1).to_string()}}});
    if page + 1 < days.len() {
        let mut next = form_urlencoded::Serializer::new(String::new());
        for (name, value) in query.iter().filter(|(name, _)| *name != "after") {
            next.append_pair(name, value);
        }
        next.append_pair("after", &(page + 1).to_string());
        body["paging"]["next"] = json!(format!("http://{host}/v23.0/{path}?{}", next.finish()));
    }
    warp::reply::json(&body).into_response()
}

/// Google Ads' campaigns of the first customer and what each costs a day, by
/// `googleAds:searchStream`: two batches, and a campaign that spent nothing (which a read
/// leaves out).
fn google_ads_spend(query: &str) -> Response {
    let between = query
        .split_once("segments.date BETWEEN '")
        .and_then(|(_, rest)| rest.split_once("' AND '"))
        .and_then(|(from, rest)| Some((from, rest.split_once('\'')?.0)));
    let asked = query.contains("FROM campaign")
        && [
            "campaign.id",
            "campaign.name",
            "segments.date",
            "metrics.cost_micros",
            "metrics.clicks",
            "customer.currency_code",
        ]
        .iter()
        .all(|field| query.contains(field));
    let Some((from, to)) = between.filter(|_| asked) else {
        return error(StatusCode::BAD_REQUEST, "QUERY_ERROR");
    };
    let rows = |days: &[String]| -> Vec<Value> {
        days.iter()
            .flat_map(|day| {
                GOOGLE_SPEND.iter().map(move |(id, name, micros, clicks)| {
                    json!({"customer": {"currencyCode": "USD"},
                           "campaign": {"resourceName": format!("customers/1234567890/campaigns/{id}"), "id": id.to_string(), "name": name},
                           "segments": {"date": day},
                           "metrics": {"costMicros": micros.to_string(), "clicks": clicks.to_string(), "impressions": "100"}})
                })
            })
            .collect()
    };
    let days = days_between(from, to);
    let (first, rest) = days.split_at(days.len().min(1));
    warp::reply::json(&json!([{"results": rows(first)}, {"results": rows(rest)}])).into_response()
}

/// LinkedIn's answers: the ad accounts, and the conversion rules of the known one.
fn linkedin_rest(path: &str, query: &HashMap<String, String>) -> Response {
    if let Some(answer) = reports::linkedin(LINKEDIN_RULE.0, path, query) {
        return answer;
    }
    let (account, account_name, rule, rule_name) = LINKEDIN_RULE;
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let body = match path {
        "adAccounts" if get("q") == "search" => {
            json!({"elements": [{"id": account, "name": account_name, "status": "ACTIVE"}]})
        }
        "conversions"
            if get("q") == "account"
                && get("account") == format!("urn:li:sponsoredAccount:{account}") =>
        {
            json!({"elements": [{"id": rule, "name": rule_name, "account": format!("urn:li:sponsoredAccount:{account}")}]})
        }
        _ => return error(StatusCode::BAD_REQUEST, "ILLEGAL_ARGUMENT"),
    };
    warp::reply::json(&body).into_response()
}

/// Microsoft Advertising's REST answers: the signed-in user, the accounts they reach, and
/// the goals of the known account (by the `CustomerId` and `CustomerAccountId` headers).
fn microsoft_rest(path: &str, account: (Option<&str>, Option<&str>), body: &Value) -> Response {
    let (customer, account_id, name, number) = MICROSOFT_ACCOUNT;
    let body = match path {
        "CustomerManagement/v13/User/Query" if body["UserId"].is_null() => {
            json!({"User": {"Id": MICROSOFT_USER, "UserName": "ads-owner@example.com"}})
        }
        "CustomerManagement/v13/Accounts/Search"
            if body["Predicates"][0]
                == json!({"Field": "UserId", "Operator": "Equals", "Value": MICROSOFT_USER.to_string()}) =>
        {
            json!({"Accounts": [{"Id": account_id, "Name": name, "Number": number, "ParentCustomerId": customer}]})
        }
        "CampaignManagement/v13/ConversionGoals/QueryByIds" => {
            if account
                != (
                    Some(&customer.to_string()[..]),
                    Some(&account_id.to_string()[..]),
                )
            {
                return error(StatusCode::BAD_REQUEST, "InvalidAccountId");
            }
            let types = body["ConversionGoalTypes"].as_str().unwrap_or_default();
            let goals: Vec<Value> = MICROSOFT_GOALS
                .iter()
                .enumerate()
                .filter(|(_, (_, kind, _))| types.split([',', ' ']).any(|t| t == *kind))
                .map(|(at, (name, kind, status))| json!({"Id": at + 1, "Name": name, "Type": kind, "Status": status}))
                .collect();
            json!({"ConversionGoals": goals, "PartialErrors": []})
        }
        _ => return error(StatusCode::BAD_REQUEST, "InvalidRequest"),
    };
    warp::reply::json(&body).into_response()
}

/// The Google Ads API's answers for the known customers, and for the manager's client
/// when asked through the manager (`login`).
fn google_ads(path: &str, body: &Value, login: Option<&str>) -> Response {
    if path == format!("customers/{}/googleAds:searchStream", CUSTOMERS[0].0) {
        return google_ads_spend(body["query"].as_str().unwrap_or_default());
    }
    if path == "customers:listAccessibleCustomers" {
        let names: Vec<String> = CUSTOMERS
            .iter()
            .map(|(id, ..)| format!("customers/{id}"))
            .collect();
        return warp::reply::json(&json!({"resourceNames": names})).into_response();
    }
    let customer = path
        .strip_prefix("customers/")
        .and_then(|rest| rest.strip_suffix("/googleAds:search"));
    let manager = CUSTOMERS
        .iter()
        .find(|(.., manager)| *manager)
        .map(|(id, ..)| *id);
    let client = (MANAGED_CLIENT.0, MANAGED_CLIENT.1, false);
    let known = CUSTOMERS.iter().find(|(id, ..)| Some(*id) == customer);
    let reached = known.or((customer == Some(client.0) && login == manager).then_some(&client));
    let Some(&(id, name, manager)) = reached else {
        return error(StatusCode::FORBIDDEN, "USER_PERMISSION_DENIED");
    };
    let query = body["query"].as_str().unwrap_or_default();
    let results = if query.contains("FROM customer_client") {
        if !manager || login != Some(id) {
            return error(StatusCode::BAD_REQUEST, "USER_PERMISSION_DENIED");
        }
        json!([{"customerClient": {"id": client.0, "descriptiveName": client.1, "manager": false, "level": "1"}}])
    } else if query.contains("FROM customer") {
        json!([{"customer": {"resourceName": format!("customers/{id}"), "id": id, "descriptiveName": name, "manager": manager}}])
    } else if query.contains("FROM conversion_action") && query.contains("UPLOAD_CLICKS") {
        let actions: Vec<Value> = if manager {
            Vec::new()
        } else {
            CONVERSION_ACTIONS
                .iter()
                .map(|(action, name)| json!({"conversionAction": {"resourceName": format!("customers/{id}/conversionActions/{action}"), "name": name}}))
                .collect()
        };
        Value::Array(actions)
    } else {
        return error(StatusCode::BAD_REQUEST, "QUERY_ERROR");
    };
    warp::reply::json(&json!({"results": results})).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7636, Appendix B.
    #[test]
    fn the_pkce_challenge_is_rfc_7636s() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
