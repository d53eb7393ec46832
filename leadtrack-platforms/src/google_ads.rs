//! Google Ads offline click conversions, through the Data Manager API (`events:ingest`),
//! the path Google opened to new developers in June 2026.
//!
//! One event per conversion: the click ids (`gclid`, `gbraid`, `wbraid`), the conversion
//! action as the destination, value and currency, `transactionId` = the conversion's id, and
//! hashed email and phone as user identifiers (enhanced conversions for leads). A new price
//! is the same event again: "send the event again with the same transactionId ... You don't
//! need to specify an adjustment type", and the new value replaces the old without counting
//! a second conversion
//! (<https://developers.google.com/data-manager/api/devguides/events/google-ads/conversion-adjustments>). The OAuth
//! access token comes from a refresh token, is cached until it expires, and is refreshed
//! once when the API answers 401.
//!
//! This module holds the requests and how their answers read; a job's delivery is
//! `leadtrack-forward`'s. Here too: the account and conversion action pickers of a signed-in
//! project ([`accounts`], [`conversion_actions`]), read through the Google Ads API.

use chrono::NaiveDate;
use leadtrack_core::integration::GoogleAdsSettings;
use leadtrack_core::oauth::ClientAuth;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant};
use leadtrack_core::spend::{SpendPlatform, SpendRow};
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::with_grant;
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://datamanager.googleapis.com";
/// Where access tokens come from unless the settings say otherwise.
pub const DEFAULT_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";

/// The most events one `events:ingest` request carries: "2,000 Event resources in the
/// events list" (<https://developers.google.com/data-manager/api/limits>). Google refuses
/// the whole request when one event is invalid.
pub const BATCH_SIZE: usize = 2_000;

/// The Data Manager API's requests per minute and per day, per Google Cloud project: every
/// project of the server that uses its Google app shares them
/// (<https://developers.google.com/data-manager/api/limits>, "IngestionService").
pub const QUOTA: (u32, u32) = (300, 100_000);

/// The conversion action id of a mapping: its id, or the last segment of a resource name
/// `customers/{customer}/conversionActions/{id}`.
pub fn conversion_action_id(mapping: &str) -> &str {
    mapping.trim().rsplit('/').next().unwrap_or_default()
}

/// A Google Ads customer id as digits (`123-456-7890` becomes `1234567890`).
fn account_id(id: &str) -> String {
    id.chars().filter(char::is_ascii_digit).collect()
}

/// Where an event goes: the settings' account (and manager account), the conversion
/// action `action`.
pub fn destination(settings: &GoogleAdsSettings, action: &str) -> Value {
    let mut destination = json!({
        "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": account_id(&settings.customer_id)},
        "productDestinationId": conversion_action_id(action),
    });
    if let Some(login) = &settings.login_customer_id {
        destination["loginAccount"] =
            json!({"accountType": "GOOGLE_ADS", "accountId": account_id(login)});
    }
    destination
}

/// The body of a test event to `action`: a made-up click id, a zero value in `currency`,
/// no personal data. Sent with `validateOnly`, Google checks the request and records
/// nothing.
pub fn test_payload(settings: &GoogleAdsSettings, action: &str, currency: &str) -> Value {
    json!({
        "destinations": [destination(settings, action)],
        "encoding": "HEX",
        "events": [{
            "transactionId": format!("leadtrack-test-{}", uuid::Uuid::new_v4()),
            "eventTimestamp": leadtrack_core::time::format(&chrono::Utc::now()),
            "eventSource": "WEB",
            "adIdentifiers": {"gclid": "leadtrack-test"},
            "conversionValue": 0.0,
            "currency": currency,
        }],
    })
}

/// What a failed answer says, without the credentials.
pub fn error_of(answer: &Answer, settings: &GoogleAdsSettings) -> String {
    let secrets = [
        settings.client_secret.expose(),
        settings.refresh_token.expose(),
    ];
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, google_error(&answer.body)),
        &secrets,
    )
}

/// Posts `body` to the Data Manager API's `events:ingest` with an access token, refreshing
/// the token once when it is no longer accepted.
pub async fn ingest(
    http: &Outbound,
    tokens: &TokenCache,
    settings: &GoogleAdsSettings,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(
        settings.base_url.as_deref(),
        DEFAULT_BASE_URL,
        "/v1/events:ingest",
    );
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        Ok(http.post(&url)?.bearer_auth(token).json(body))
    })
    .await
}

/// The settings' refresh-token grant at Google's OAuth endpoint.
fn grant(settings: &GoogleAdsSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: Some(settings.client_secret.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: None,
        auth: ClientAuth::Form,
    }
}

/// The message of a `google.rpc.Status` error body, or the body itself.
fn google_error(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Status {
        error: StatusDetail,
    }
    #[derive(Deserialize)]
    struct StatusDetail {
        #[serde(default)]
        status: String,
        #[serde(default)]
        message: String,
    }
    match serde_json::from_slice::<Status>(body) {
        Ok(Status { error }) => outcome::short(&format!("{} {}", error.status, error.message)),
        Err(_) => outcome::short(&String::from_utf8_lossy(body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_actions_by_id_or_resource_name() {
        assert_eq!(conversion_action_id("123456789"), "123456789");
        assert_eq!(
            conversion_action_id("customers/1234567890/conversionActions/987"),
            "987"
        );
        assert_eq!(account_id("123-456-7890"), "1234567890");
    }

    #[test]
    fn google_errors_read_their_status_and_message() {
        let body = br#"{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(
            google_error(body),
            "INVALID_ARGUMENT Request contains an invalid argument."
        );
        assert_eq!(google_error(b"oops"), "oops");
    }
}

/// The Google Ads API version the pickers read
/// (<https://developers.google.com/google-ads/api/docs/release-notes>).
pub const GOOGLE_ADS_API_VERSION: &str = "v21";

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

/// Calls the Google Ads API at `path` (a GET without body, else a POST of `body`) with the
/// grant's access token and the operator's developer token.
async fn call(
    http: &Outbound,
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
            Some(body) => http.post(&url)?.json(body),
            None => http.get(&url)?,
        };
        let request = request
            .bearer_auth(token)
            .header("developer-token", developer_token.expose());
        Ok(match login_customer {
            Some(manager) => request.header("login-customer-id", manager),
            None => request,
        })
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
pub async fn accounts(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<AdsAccount>, String> {
    let listed = call(
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
        let found = search(http, (app, grant), &id, query, None).await?;
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
    http: &Outbound,
    with: (&OAuthApp, &OAuthGrant),
    manager: &str,
) -> Result<Vec<AdsAccount>, String> {
    let query = "SELECT customer_client.id, customer_client.descriptive_name, customer_client.manager FROM customer_client WHERE customer_client.level = 1";
    let found = search(http, with, manager, query, Some(manager)).await?;
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
async fn search(
    http: &Outbound,
    with: (&OAuthApp, &OAuthGrant),
    customer: &str,
    query: &str,
    login_customer: Option<&str>,
) -> Result<serde_json::Value, String> {
    let path = format!("customers/{customer}/googleAds:search");
    let body = Some(json!({ "query": query }));
    let found = call(http, with, &path, body, login_customer).await?;
    Ok(found["results"].clone())
}

/// What the customer `account` (`ID`, or `ID:MANAGER` for a client reached through its
/// manager) spent per campaign and day from `from` to `to`: GAQL over `campaign` with
/// `metrics.cost_micros`, `metrics.clicks` and `metrics.impressions` by `segments.date`, in
/// the account's `customer.currency_code`
/// (<https://developers.google.com/google-ads/api/fields/v21/campaign>), through
/// `googleAds:searchStream`, which answers every row in batches
/// (<https://developers.google.com/google-ads/api/rest/reference/rest/v21/customers.googleAds/searchStream>).
/// Days a campaign neither spent nor was clicked are left out.
pub async fn spend(
    http: &Outbound,
    with: (&OAuthApp, &OAuthGrant),
    account: &str,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, String> {
    let (customer, manager) = match account.split_once(':') {
        Some((customer, manager)) => (account_id(customer), Some(account_id(manager))),
        None => (account_id(account), None),
    };
    let query = format!(
        "SELECT customer.currency_code, campaign.id, campaign.name, segments.date, metrics.cost_micros, metrics.clicks, metrics.impressions FROM campaign WHERE segments.date BETWEEN '{from}' AND '{to}'"
    );
    let path = format!("customers/{customer}/googleAds:searchStream");
    let body = Some(json!({ "query": query }));
    let batches = call(http, with, &path, body, manager.as_deref()).await?;
    let results = batches
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|batch| batch["results"].as_array().cloned().unwrap_or_default());
    let mut rows = Vec::new();
    for result in results {
        // int64 fields come as strings (proto3 JSON).
        let number = |value: &Value| {
            value
                .as_str()
                .and_then(|n| n.parse::<i64>().ok())
                .or(value.as_i64())
                .unwrap_or_default()
        };
        let metrics = &result["metrics"];
        let (cost_micros, clicks) = (number(&metrics["costMicros"]), number(&metrics["clicks"]));
        if cost_micros == 0 && clicks == 0 {
            continue;
        }
        let date = result["segments"]["date"].as_str().unwrap_or_default();
        let date = NaiveDate::parse_from_str(date, "%Y-%m-%d")
            .map_err(|_| "Google Ads gave a row without its day".to_owned())?;
        let campaign = &result["campaign"];
        rows.push(SpendRow {
            date,
            source: SpendPlatform::GoogleAds.source().to_owned(),
            medium: "cpc".to_owned(),
            account: customer.clone(),
            campaign_id: Some(number(&campaign["id"]).to_string()),
            campaign: campaign["name"].as_str().unwrap_or_default().to_owned(),
            currency: result["customer"]["currencyCode"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            cost_micros,
            clicks: u64::try_from(clicks).ok(),
            impressions: u64::try_from(number(&metrics["impressions"])).ok(),
        });
    }
    Ok(rows)
}

/// The customer's enabled conversion actions that take uploaded clicks (`UPLOAD_CLICKS`,
/// what offline conversions are sent to), by name
/// (<https://developers.google.com/google-ads/api/fields/v21/conversion_action>).
pub async fn conversion_actions(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
    (customer, login_customer): (&str, Option<&str>),
) -> Result<Vec<ConversionAction>, String> {
    let query = "SELECT conversion_action.resource_name, conversion_action.name FROM conversion_action WHERE conversion_action.type = 'UPLOAD_CLICKS' AND conversion_action.status = 'ENABLED' ORDER BY conversion_action.name";
    let found = search(http, (app, grant), customer, query, login_customer).await?;
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
