//! Connecting a platform by signing in: a consent's code exchanged for a refresh token
//! (RFC 6749 section 4.1.3, with PKCE's verifier, RFC 7636 section 4.5), and the accounts
//! and conversions a connected project picks from.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use leadtrack_core::integration::Secret;
use leadtrack_core::integration::{DEFAULT_LINKEDIN_API_VERSION, DEFAULT_META_API_VERSION};
use leadtrack_core::oauth::{OAuthApp, OAuthGrant, Provider};
use serde::Deserialize;
use serde_json::json;

use crate::oauth::{RefreshGrant, TokenCache, send_authorized};
use crate::outcome::{self, Answer, Outcome};

/// The Google Ads API version the pickers read
/// (<https://developers.google.com/google-ads/api/docs/release-notes>).
pub const GOOGLE_ADS_API_VERSION: &str = "v21";

/// What a consent gave: who signed in, and the refresh token.
#[derive(Clone, Debug)]
pub struct Consent {
    /// Who signed in (the ID token's `email`, else its `sub`).
    pub account: String,
    /// The refresh token.
    pub refresh_token: Secret,
}

/// What a token endpoint answers to a code.
#[derive(Deserialize)]
struct CodeAnswer {
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    id_token: Option<String>,
}

/// Exchanges the code a consent returned for its refresh token. The error is for people,
/// without any credential.
pub async fn exchange(
    http: &reqwest::Client,
    app: &OAuthApp,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<Consent, String> {
    if app.provider == Provider::Meta {
        return exchange_meta(http, app, (code, verifier), redirect_uri).await;
    }
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("client_id", &app.client_id)
        .append_pair("client_secret", app.client_secret.expose())
        .append_pair("code_verifier", verifier)
        .finish();
    let request = http
        .post(&app.endpoints.token)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(form);
    let secrets = [app.client_secret.expose(), code, verifier];
    let answer = outcome::send(request)
        .await
        .map_err(|failed| failure(&failed))?;
    if !answer.is_success() {
        return Err(outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &secrets,
        ));
    }
    let tokens: CodeAnswer = serde_json::from_slice(&answer.body)
        .map_err(|_| "the answer is not the token endpoint's JSON".to_owned())?;
    let refresh_token = tokens.refresh_token.ok_or_else(|| {
        format!(
            "{} gave no refresh token; remove leadtrack's access in your account's security settings, then connect again",
            app.provider.name()
        )
    })?;
    Ok(Consent {
        account: tokens
            .id_token
            .as_deref()
            .and_then(signed_in)
            .unwrap_or_else(|| format!("your {} account", app.provider.name())),
        refresh_token: Secret::new(refresh_token),
    })
}

/// Meta's exchange (<https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow>):
/// the code for a short-lived user token (a GET), that token for a long-lived one (60
/// days; <https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived>),
/// and who signed in from `/me`.
async fn exchange_meta(
    http: &reqwest::Client,
    app: &OAuthApp,
    (code, verifier): (&str, &str),
    redirect_uri: &str,
) -> Result<Consent, String> {
    let secret = app.client_secret.expose();
    let short = graph(
        http,
        &app.endpoints.token,
        &[
            ("client_id", app.client_id.as_str()),
            ("redirect_uri", redirect_uri),
            ("client_secret", secret),
            ("code", code),
            ("code_verifier", verifier),
        ],
        &[secret, code, verifier],
    )
    .await?;
    let short = short["access_token"]
        .as_str()
        .ok_or("Meta gave no access token")?;
    let long = graph(
        http,
        &app.endpoints.token,
        &[
            ("grant_type", "fb_exchange_token"),
            ("client_id", app.client_id.as_str()),
            ("client_secret", secret),
            ("fb_exchange_token", short),
        ],
        &[secret, short],
    )
    .await?;
    let token = long["access_token"]
        .as_str()
        .ok_or("Meta gave no long-lived token")?;
    let me = format!("{}/{DEFAULT_META_API_VERSION}/me", app.endpoints.api);
    let me = graph(
        http,
        &me,
        &[("fields", "name"), ("access_token", token)],
        &[token],
    )
    .await?;
    Ok(Consent {
        account: me["name"]
            .as_str()
            .unwrap_or("your Meta account")
            .to_owned(),
        refresh_token: Secret::new(token),
    })
}

/// A Graph API GET of `url` with `query`, as JSON; the error names no secret.
async fn graph(
    http: &reqwest::Client,
    url: &str,
    query: &[(&str, &str)],
    secrets: &[&str],
) -> Result<serde_json::Value, String> {
    let answer = outcome::send(http.get(url).query(query))
        .await
        .map_err(|failed| outcome::scrub(failure(&failed), secrets))?;
    json_answer("Meta", &answer, secrets)
}

/// A platform's answer as JSON, or what went wrong in words, naming no secret.
fn json_answer(
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
async fn with_grant(
    http: &reqwest::Client,
    (app, grant): (&OAuthApp, &OAuthGrant),
    platform: &str,
    request: impl Fn(&str) -> reqwest::RequestBuilder,
    secrets: &[&str],
) -> Result<serde_json::Value, String> {
    let refresh = RefreshGrant {
        token_url: &app.endpoints.token,
        client_id: &app.client_id,
        client_secret: Some(app.client_secret.expose()),
        refresh_token: grant.refresh_token.expose(),
        scope: None,
    };
    let answer = send_authorized(http, tokens(), &refresh, request)
        .await
        .map_err(|failed| failure(&failed))?;
    let mut secrets = secrets.to_vec();
    secrets.push(grant.refresh_token.expose());
    json_answer(platform, &answer, &secrets)
}

/// A Meta pixel (dataset) the signed-in person reaches, with its ad account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaPixel {
    /// The pixel's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The name of the ad account it belongs to.
    pub account: String,
}

/// The pixels of every ad account the grant reaches: `/me/adaccounts`
/// (<https://developers.facebook.com/docs/marketing-api/reference/user/adaccounts>), then
/// each account's `adspixels`
/// (<https://developers.facebook.com/docs/marketing-api/reference/ad-account/adspixels>).
pub async fn meta_pixels(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MetaPixel>, String> {
    let token = grant.refresh_token.expose();
    let base = format!("{}/{DEFAULT_META_API_VERSION}", app.endpoints.api);
    let accounts = graph(
        http,
        &format!("{base}/me/adaccounts"),
        &[("fields", "name,account_id"), ("access_token", token)],
        &[token],
    )
    .await?;
    let mut pixels = Vec::new();
    for account in accounts["data"].as_array().cloned().unwrap_or_default() {
        let (Some(id), Some(name)) = (account["account_id"].as_str(), account["name"].as_str())
        else {
            continue;
        };
        let found = graph(
            http,
            &format!("{base}/act_{id}/adspixels"),
            &[("fields", "name"), ("access_token", token)],
            &[token],
        )
        .await?;
        for pixel in found["data"].as_array().cloned().unwrap_or_default() {
            if let (Some(pixel_id), Some(pixel_name)) =
                (pixel["id"].as_str(), pixel["name"].as_str())
            {
                pixels.push(MetaPixel {
                    id: pixel_id.to_owned(),
                    name: pixel_name.to_owned(),
                    account: name.to_owned(),
                });
            }
        }
    }
    Ok(pixels)
}

/// A Facebook page the signed-in person manages, for Lead Ads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaPage {
    /// The page's id.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// The pages the grant's person manages, with each page's own token: `/me/accounts`
/// (<https://developers.facebook.com/docs/graph-api/reference/user/accounts/>). The tokens
/// stay on the server.
async fn meta_pages_with_tokens(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<(MetaPage, Secret)>, String> {
    let token = grant.refresh_token.expose();
    let url = format!(
        "{}/{DEFAULT_META_API_VERSION}/me/accounts",
        app.endpoints.api
    );
    let query = [("fields", "id,name,access_token"), ("access_token", token)];
    let listed = graph(http, &url, &query, &[token]).await?;
    let pages = listed["data"].as_array().cloned().unwrap_or_default();
    Ok(pages
        .iter()
        .filter_map(|page| {
            let page_token = page["access_token"].as_str()?;
            Some((
                MetaPage {
                    id: page["id"].as_str()?.to_owned(),
                    name: page["name"].as_str().unwrap_or("(no name)").to_owned(),
                },
                Secret::new(page_token),
            ))
        })
        .collect())
}

/// The pages the grant's person manages.
pub async fn meta_pages(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MetaPage>, String> {
    let pages = meta_pages_with_tokens(http, app, grant).await?;
    Ok(pages.into_iter().map(|(page, _)| page).collect())
}

/// Subscribes the server's app to the page's new leads (`POST /{page}/subscribed_apps`
/// with `subscribed_fields=leadgen`,
/// <https://developers.facebook.com/docs/graph-api/webhooks/getting-started/webhooks-for-leadgen/>),
/// and returns the page's token, which reads them. The error names no token.
pub async fn subscribe_meta_page(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
    page_id: &str,
) -> Result<Secret, String> {
    let pages = meta_pages_with_tokens(http, app, grant).await?;
    let (_, page_token) = pages
        .into_iter()
        .find(|(page, _)| page.id == page_id)
        .ok_or("the page is not one the signed-in person manages")?;
    let url = format!(
        "{}/{DEFAULT_META_API_VERSION}/{page_id}/subscribed_apps",
        app.endpoints.api
    );
    let token = page_token.expose();
    let request = http
        .post(&url)
        .query(&[("subscribed_fields", "leadgen"), ("access_token", token)]);
    let answer = outcome::send(request)
        .await
        .map_err(|failed| outcome::scrub(failure(&failed), &[token]))?;
    let answered = json_answer("Meta", &answer, &[token])?;
    if answered["success"] != json!(true) {
        return Err("Meta did not subscribe the app to the page's leads".to_owned());
    }
    Ok(page_token)
}

/// A LinkedIn ad account the signed-in member reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedinAccount {
    /// Its id (digits).
    pub id: String,
    /// Its name.
    pub name: String,
}

/// The ad accounts the grant's member reaches
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads/account-structure/create-and-manage-accounts#search-for-accounts>).
pub async fn linkedin_ad_accounts(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<LinkedinAccount>, String> {
    let accounts = linkedin(http, (app, grant), "adAccounts?q=search").await?;
    let listed = accounts["elements"].as_array().cloned().unwrap_or_default();
    Ok(listed
        .iter()
        .filter_map(|account| {
            Some(LinkedinAccount {
                id: account["id"].as_i64()?.to_string(),
                name: account["name"].as_str().unwrap_or("(no name)").to_owned(),
            })
        })
        .collect())
}

/// Who an ID token names: its `email`, else its `sub`. The token came straight from the
/// token endpoint over TLS, which OpenID Connect Core (section 3.1.3.7) accepts in place of
/// checking its signature.
fn signed_in(id_token: &str) -> Option<String> {
    let payload = id_token.split('.').nth(1)?;
    let claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims
        .get("email")
        .or_else(|| claims.get("sub"))
        .and_then(|value| value.as_str())
        .map(str::to_owned)
}

/// A failed request, in words.
fn failure(failed: &Outcome) -> String {
    match failed {
        Outcome::Retry { error, .. } | Outcome::Failed { error, .. } => error.clone(),
        Outcome::Delivered { .. } | Outcome::Skipped { .. } => "no answer".to_owned(),
    }
}

/// A Google Ads account the signed-in person reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdsAccount {
    /// Its customer id (digits).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Whether it is a manager account.
    pub manager: bool,
    /// The manager it is reached through (the `login-customer-id` of its calls), when the
    /// person reaches it only as that manager's client.
    pub via: Option<String>,
}

/// A conversion action that takes uploaded clicks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionAction {
    /// `customers/{id}/conversionActions/{id}`.
    pub resource_name: String,
    /// Its name in Google Ads.
    pub name: String,
}

/// Access tokens of the pickers, shared by every request of the process.
fn tokens() -> &'static TokenCache {
    static TOKENS: OnceLock<TokenCache> = OnceLock::new();
    TOKENS.get_or_init(TokenCache::default)
}

/// Calls the Google Ads API at `path` (a GET without body, else a POST of `body`) with the
/// grant's access token and the operator's developer token.
async fn google_ads(
    http: &reqwest::Client,
    (app, grant): (&OAuthApp, &OAuthGrant),
    path: &str,
    body: Option<serde_json::Value>,
    login_customer: Option<&str>,
) -> Result<serde_json::Value, String> {
    let developer_token = app
        .developer_token
        .as_ref()
        .ok_or("the server has no Google Ads developer token (--google-ads-developer-token)")?;
    let url = format!("{}/{GOOGLE_ADS_API_VERSION}/{path}", app.endpoints.api);
    let request = |token: &str| {
        let request = match &body {
            Some(body) => http.post(&url).json(body),
            None => http.get(&url),
        };
        let request = request
            .bearer_auth(token)
            .header("developer-token", developer_token.expose());
        match login_customer {
            Some(manager) => request.header("login-customer-id", manager),
            None => request,
        }
    };
    with_grant(
        http,
        (app, grant),
        "Google Ads",
        request,
        &[developer_token.expose()],
    )
    .await
}

/// The Google Ads accounts the grant reaches, with their names: `customers:listAccessibleCustomers`
/// (<https://developers.google.com/google-ads/api/rest/reference/rest/v21/customers/listAccessibleCustomers>),
/// each customer's name and kind from a `customer` query
/// (<https://developers.google.com/google-ads/api/fields/v21/customer>), and the client
/// accounts of each manager among them, reached through it
/// (<https://developers.google.com/google-ads/api/docs/account-management/get-account-hierarchy>).
pub async fn google_ads_accounts(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<AdsAccount>, String> {
    let listed = google_ads(
        http,
        (app, grant),
        "customers:listAccessibleCustomers",
        None,
        None,
    )
    .await?;
    let mut accounts: Vec<AdsAccount> = Vec::new();
    let names = listed["resourceNames"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for name in names.iter().filter_map(|name| name.as_str()) {
        let id = name.trim_start_matches("customers/").to_owned();
        let query =
            "SELECT customer.id, customer.descriptive_name, customer.manager FROM customer LIMIT 1";
        let found = google_ads_query(http, (app, grant), &id, query, None).await?;
        let account = AdsAccount {
            id,
            ..ads_account(&found[0]["customer"], None)
        };
        if account.manager {
            accounts.extend(manager_clients(http, (app, grant), &account.id).await?);
        }
        accounts.push(account);
    }
    // By name, managers last; an account reached both directly and through a manager is
    // kept once, directly.
    let key = |a: &AdsAccount| (a.manager, a.name.clone(), a.id.clone(), a.via.is_some());
    accounts.sort_by_key(key);
    accounts.dedup_by(|later, kept| later.id == kept.id);
    Ok(accounts)
}

/// The accounts directly under the manager `manager`, reached through it.
async fn manager_clients(
    http: &reqwest::Client,
    with: (&OAuthApp, &OAuthGrant),
    manager: &str,
) -> Result<Vec<AdsAccount>, String> {
    let query = "SELECT customer_client.id, customer_client.descriptive_name, customer_client.manager FROM customer_client WHERE customer_client.level = 1";
    let found = google_ads_query(http, with, manager, query, Some(manager)).await?;
    let clients = found.as_array().cloned().unwrap_or_default();
    Ok(clients
        .iter()
        .map(|row| ads_account(&row["customerClient"], Some(manager)))
        .filter(|client| !client.id.is_empty())
        .collect())
}

/// An account as a `customer` or `customer_client` row names it.
fn ads_account(row: &serde_json::Value, via: Option<&str>) -> AdsAccount {
    // The id is an int64, which the API's JSON writes as a string.
    let id = match &row["id"] {
        serde_json::Value::String(id) => id.clone(),
        other => other.as_i64().map(|id| id.to_string()).unwrap_or_default(),
    };
    AdsAccount {
        name: row["descriptiveName"]
            .as_str()
            .filter(|name| !name.is_empty())
            .unwrap_or("(no name)")
            .to_owned(),
        manager: row["manager"].as_bool().unwrap_or(false),
        via: via.map(str::to_owned),
        id,
    }
}

/// The rows `query` (GAQL) finds in `customer`'s account, as `googleAds:search` answers
/// them.
async fn google_ads_query(
    http: &reqwest::Client,
    with: (&OAuthApp, &OAuthGrant),
    customer: &str,
    query: &str,
    login_customer: Option<&str>,
) -> Result<serde_json::Value, String> {
    let path = format!("customers/{customer}/googleAds:search");
    let body = Some(json!({ "query": query }));
    let found = google_ads(http, with, &path, body, login_customer).await?;
    Ok(found["results"].clone())
}

/// The customer's enabled conversion actions that take uploaded clicks (`UPLOAD_CLICKS`,
/// what offline conversions are sent to), by name
/// (<https://developers.google.com/google-ads/api/fields/v21/conversion_action>).
pub async fn google_ads_conversion_actions(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
    (customer, login_customer): (&str, Option<&str>),
) -> Result<Vec<ConversionAction>, String> {
    let query = "SELECT conversion_action.resource_name, conversion_action.name FROM conversion_action WHERE conversion_action.type = 'UPLOAD_CLICKS' AND conversion_action.status = 'ENABLED' ORDER BY conversion_action.name";
    let found = google_ads_query(http, (app, grant), customer, query, login_customer).await?;
    let results = found.as_array().cloned().unwrap_or_default();
    Ok(results
        .iter()
        .filter_map(|result| {
            let action = &result["conversionAction"];
            Some(ConversionAction {
                resource_name: action["resourceName"].as_str()?.to_owned(),
                name: action["name"].as_str()?.to_owned(),
            })
        })
        .collect())
}

/// A LinkedIn conversion rule the signed-in member reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionRule {
    /// `urn:lla:llaPartnerConversion:{id}`, as labels name it.
    pub urn: String,
    /// Its name, with its ad account's.
    pub name: String,
}

/// Calls LinkedIn's Marketing API at `path_and_query` with the grant's access token.
async fn linkedin(
    http: &reqwest::Client,
    (app, grant): (&OAuthApp, &OAuthGrant),
    path_and_query: &str,
) -> Result<serde_json::Value, String> {
    let url = format!("{}/rest/{path_and_query}", app.endpoints.api);
    let request = |token: &str| {
        http.get(&url)
            .bearer_auth(token)
            .header("LinkedIn-Version", DEFAULT_LINKEDIN_API_VERSION)
            .header("X-Restli-Protocol-Version", "2.0.0")
    };
    with_grant(http, (app, grant), "LinkedIn", request, &[]).await
}

/// The conversion rules of every ad account the grant reaches: the accounts
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads/account-structure/create-and-manage-accounts#search-for-accounts>),
/// then each one's rules
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversion-tracking#find-conversions-by-ad-account>).
pub async fn linkedin_conversion_rules(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<ConversionRule>, String> {
    let accounts = linkedin(http, (app, grant), "adAccounts?q=search").await?;
    let mut rules = Vec::new();
    for account in accounts["elements"].as_array().cloned().unwrap_or_default() {
        let (Some(id), Some(account_name)) = (account["id"].as_i64(), account["name"].as_str())
        else {
            continue;
        };
        let query = format!("conversions?q=account&account=urn%3Ali%3AsponsoredAccount%3A{id}");
        let found = linkedin(http, (app, grant), &query).await?;
        for rule in found["elements"].as_array().cloned().unwrap_or_default() {
            if let (Some(rule_id), Some(name)) = (rule["id"].as_i64(), rule["name"].as_str()) {
                rules.push(ConversionRule {
                    urn: format!("urn:lla:llaPartnerConversion:{rule_id}"),
                    name: format!("{name} · {account_name}"),
                });
            }
        }
    }
    Ok(rules)
}

/// A Microsoft Advertising account the signed-in user reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MicrosoftAccount {
    /// The customer it belongs to (the `CustomerId` of its calls).
    pub customer_id: String,
    /// Its id (the `CustomerAccountId`), not its number.
    pub account_id: String,
    /// Its name.
    pub name: String,
    /// Its number, as Microsoft Advertising shows it (e.g. `F12345AB`).
    pub number: String,
}

/// Calls the Microsoft Advertising REST API at `url` with `body`, the grant's access token,
/// the operator's developer token and, for an account's calls, its customer and account.
async fn microsoft(
    http: &reqwest::Client,
    (app, grant): (&OAuthApp, &OAuthGrant),
    url: &str,
    body: serde_json::Value,
    account: Option<(&str, &str)>,
) -> Result<serde_json::Value, String> {
    let developer_token = app.developer_token.as_ref().ok_or(
        "the server has no Microsoft Advertising developer token (--microsoft-ads-developer-token)",
    )?;
    let request = |token: &str| {
        let request = http
            .post(url)
            .bearer_auth(token)
            .header("DeveloperToken", developer_token.expose())
            .json(&body);
        match account {
            Some((customer, account)) => request
                .header("CustomerId", customer)
                .header("CustomerAccountId", account),
            None => request,
        }
    };
    let secrets = [developer_token.expose()];
    with_grant(
        http,
        (app, grant),
        "Microsoft Advertising",
        request,
        &secrets,
    )
    .await
}

/// The accounts the signed-in user reaches: who they are (`GetUser` with no id,
/// <https://learn.microsoft.com/en-us/advertising/customer-management-service/getuser?view=bingads-13>),
/// then the accounts that user can access (`SearchAccounts` by `UserId`,
/// <https://learn.microsoft.com/en-us/advertising/customer-management-service/searchaccounts?view=bingads-13>),
/// from the Customer Management REST API.
pub async fn microsoft_accounts(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MicrosoftAccount>, String> {
    let base = format!("{}/CustomerManagement/v13", app.endpoints.api);
    let with = (app, grant);
    let user = microsoft(
        http,
        with,
        &format!("{base}/User/Query"),
        json!({"UserId": null}),
        None,
    )
    .await?;
    let user_id = match &user["User"]["Id"] {
        serde_json::Value::Number(id) => id.to_string(),
        _ => return Err("Microsoft Advertising named no user".to_owned()),
    };
    let search = json!({
        "Predicates": [{"Field": "UserId", "Operator": "Equals", "Value": user_id}],
        "Ordering": [{"Field": "Name", "Order": "Ascending"}],
        "PageInfo": {"Index": 0, "Size": 1000}
    });
    let found = microsoft(http, with, &format!("{base}/Accounts/Search"), search, None).await?;
    let listed = found["Accounts"].as_array().cloned().unwrap_or_default();
    Ok(listed
        .iter()
        .filter_map(|account| {
            Some(MicrosoftAccount {
                customer_id: account["ParentCustomerId"].as_i64()?.to_string(),
                account_id: account["Id"].as_i64()?.to_string(),
                name: account["Name"].as_str().unwrap_or("(no name)").to_owned(),
                number: account["Number"].as_str().unwrap_or_default().to_owned(),
            })
        })
        .collect())
}

/// The names of the account's offline conversion goals, what its conversions name
/// (`GetConversionGoalsByIds` with no ids and the `OfflineConversion` type,
/// <https://learn.microsoft.com/en-us/advertising/campaign-management-service/getconversiongoalsbyids?view=bingads-13>),
/// from the Campaign Management REST API at `campaign_base`. Paused goals are left out.
pub async fn microsoft_offline_goals(
    http: &reqwest::Client,
    app: &OAuthApp,
    grant: &OAuthGrant,
    (campaign_base, customer, account): (&str, &str, &str),
) -> Result<Vec<String>, String> {
    let url = format!(
        "{}/CampaignManagement/v13/ConversionGoals/QueryByIds",
        campaign_base.trim_end_matches('/')
    );
    let body = json!({"ConversionGoalIds": null, "ConversionGoalTypes": "OfflineConversion"});
    let found = microsoft(http, (app, grant), &url, body, Some((customer, account))).await?;
    let goals = found["ConversionGoals"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut names: Vec<String> = goals
        .iter()
        .filter(|goal| goal["Status"].as_str() != Some("Paused"))
        .filter_map(|goal| goal["Name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_token_names_who_signed_in() {
        let claims = URL_SAFE_NO_PAD.encode(br#"{"sub":"123","email":"ada@example.com"}"#);
        assert_eq!(
            signed_in(&format!("e30.{claims}.sig")).as_deref(),
            Some("ada@example.com")
        );
        let sub = URL_SAFE_NO_PAD.encode(br#"{"sub":"123"}"#);
        assert_eq!(signed_in(&format!("e30.{sub}.")).as_deref(), Some("123"));
        assert_eq!(signed_in("not a token"), None);
    }
}
