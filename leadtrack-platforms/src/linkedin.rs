//! LinkedIn, through the Conversions API.
//!
//! `POST {base}/rest/conversionEvents` with an OAuth access token, the `LinkedIn-Version`
//! header, `X-Restli-Protocol-Version: 2.0.0` and `X-RestLi-Method: BATCH_CREATE`, up to
//! 5,000 conversion events in `elements`, each with the conversion rule's URN,
//! `conversionHappenedAt` in epoch milliseconds, the value (an amount as a string) and
//! currency, the member's ids (the SHA-256 of the email, and the first-party click id
//! `li_fat_id`), and the job's event id for deduplication
//! (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api>).
//! LinkedIn answers `200` with a status per element, `201` for each created. The optional
//! `userInfo` (names and company in clear text) is not sent: personal data leaves
//! leadtrack only hashed.
//!
//! This module holds the requests and how their answers read; a job's delivery is
//! `leadtrack-forward`'s. Here too: the lead form responses reader ([`read`]) and the ad
//! account and conversion rule pickers ([`ad_accounts`], [`conversion_rules`]), and the
//! spend reader ([`spend`]).

use chrono::{Datelike, NaiveDate};
use leadtrack_core::integration::DEFAULT_LINKEDIN_API_VERSION;
use leadtrack_core::integration::LinkedinSettings;
use leadtrack_core::oauth::ClientAuth;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant};
use leadtrack_core::spend::{SpendPlatform, SpendRow};
use leadtrack_outbound::Outbound;
use serde_json::Value;

use crate::api::with_grant;
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.linkedin.com";
/// LinkedIn's token endpoint.
pub const DEFAULT_TOKEN_URL: &str = "https://www.linkedin.com/oauth/v2/accessToken";
/// The most conversion events one `BATCH_CREATE` request carries: "up to 5,000 events in
/// one batch", by the Conversions API's streaming of several events
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api>).
pub const BATCH_SIZE: usize = 5_000;

/// The settings' refresh-token grant at LinkedIn's OAuth endpoint.
pub fn grant(settings: &LinkedinSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: Some(settings.client_secret.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: None,
        auth: ClientAuth::Form,
    }
}

/// Posts several conversion events in one Rest.li `BATCH_CREATE` request (the
/// `X-RestLi-Method` header, the events in `elements`), with a token and the versioned
/// headers. LinkedIn answers with a status per element, in order.
pub async fn post_batch(
    http: &Outbound,
    tokens: &TokenCache,
    settings: &LinkedinSettings,
    events: Vec<Value>,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(
        settings.base_url.as_deref(),
        DEFAULT_BASE_URL,
        "/rest/conversionEvents",
    );
    let body = serde_json::json!({ "elements": events });
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        Ok(http
            .post(&url)?
            .bearer_auth(token)
            .header("LinkedIn-Version", &settings.api_version)
            .header("X-Restli-Protocol-Version", "2.0.0")
            .header("X-RestLi-Method", "BATCH_CREATE")
            .json(&body))
    })
    .await
}

/// Reads LinkedIn's answer to a `BATCH_CREATE` of `count` events: each element's own
/// status (`201` created; another is that event's failure, in LinkedIn's words) when the
/// answer lists one per event, else the request's status for all.
pub fn classify_each(answer: &Answer, settings: &LinkedinSettings, count: usize) -> Vec<Outcome> {
    #[derive(serde::Deserialize)]
    struct Elements {
        elements: Vec<Element>,
    }
    #[derive(serde::Deserialize)]
    struct Element {
        status: u16,
        #[serde(default)]
        error: Option<Value>,
    }
    let listed = serde_json::from_slice::<Elements>(&answer.body)
        .map(|body| body.elements)
        .unwrap_or_default();
    if !answer.is_success() || listed.len() != count {
        let outcome = answer.by_status(|| error_of(answer, settings));
        return vec![outcome; count];
    }
    listed
        .into_iter()
        .map(|element| {
            let own = Answer {
                status: element.status,
                retry_after: answer.retry_after,
                body: element
                    .error
                    .map(|e| e.to_string().into_bytes())
                    .unwrap_or_default(),
            };
            own.by_status(|| error_of(&own, settings))
        })
        .collect()
}

/// Reads `path_and_query` (under `/rest/`) of LinkedIn's Marketing API with the
/// integration's credentials, as JSON: the lead sources read lead forms and their
/// responses with it. The error names no credential.
pub async fn read(
    http: &Outbound,
    settings: &LinkedinSettings,
    path_and_query: &str,
) -> Result<Value, String> {
    static TOKENS: std::sync::OnceLock<TokenCache> = std::sync::OnceLock::new();
    let tokens = TOKENS.get_or_init(TokenCache::default);
    let url = outcome::endpoint(
        settings.base_url.as_deref(),
        DEFAULT_BASE_URL,
        &format!("/rest/{path_and_query}"),
    );
    let answer = oauth::send_authorized(http, tokens, &grant(settings), |token| {
        Ok(http
            .get(&url)?
            .bearer_auth(token)
            .header("LinkedIn-Version", &settings.api_version)
            .header("X-Restli-Protocol-Version", "2.0.0"))
    })
    .await
    .map_err(|failed| match failed {
        Outcome::Retry { error, .. } | Outcome::Failed { error, .. } => error,
        Outcome::Delivered { .. } | Outcome::Skipped { .. } => "no answer".to_owned(),
    })?;
    if !answer.is_success() {
        return Err(error_of(&answer, settings));
    }
    serde_json::from_slice(&answer.body)
        .map_err(|_| "LinkedIn answered something else than JSON".to_owned())
}

/// What a failed answer says (LinkedIn's `message` and `serviceErrorCode` are in the
/// body), without the credentials.
pub fn error_of(answer: &Answer, settings: &LinkedinSettings) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[
            settings.client_secret.expose(),
            settings.refresh_token.expose(),
        ],
    )
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
pub async fn ad_accounts(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<LinkedinAccount>, String> {
    let accounts = call(http, (app, grant), "adAccounts?q=search").await?;
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

/// A LinkedIn conversion rule the signed-in member reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionRule {
    /// `urn:lla:llaPartnerConversion:{id}`, as labels name it.
    pub urn: String,
    /// Its name, with its ad account's.
    pub name: String,
}

/// Calls LinkedIn's Marketing API at `path_and_query` with the grant's access token.
async fn call(
    http: &Outbound,
    (app, grant): (&OAuthApp, &OAuthGrant),
    path_and_query: &str,
) -> Result<serde_json::Value, String> {
    let url = format!("{}/rest/{path_and_query}", app.endpoints.api);
    let request = |token: &str| {
        Ok(http
            .get(&url)?
            .bearer_auth(token)
            .header("LinkedIn-Version", DEFAULT_LINKEDIN_API_VERSION)
            .header("X-Restli-Protocol-Version", "2.0.0"))
    };
    with_grant(http, (app, grant), "LinkedIn", request, &[]).await
}

/// The conversion rules of every ad account the grant reaches: the accounts
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads/account-structure/create-and-manage-accounts#search-for-accounts>),
/// then each one's rules
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversion-tracking#find-conversions-by-ad-account>).
pub async fn conversion_rules(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<ConversionRule>, String> {
    let accounts = call(http, (app, grant), "adAccounts?q=search").await?;
    let mut rules = Vec::new();
    for account in accounts["elements"].as_array().cloned().unwrap_or_default() {
        let (Some(id), Some(account_name)) = (account["id"].as_i64(), account["name"].as_str())
        else {
            continue;
        };
        let query = format!("conversions?q=account&account=urn%3Ali%3AsponsoredAccount%3A{id}");
        let found = call(http, (app, grant), &query).await?;
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

/// What the ad account `account` (digits) spent per campaign and day from `from` to `to`:
/// the Analytics finder of `adAnalytics` with `pivot=CAMPAIGN` and `timeGranularity=DAILY`,
/// `costInLocalCurrency` in the account's currency
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/ads-reporting>,
/// read with `r_ads_reporting`); the account's currency and its campaigns' names from the
/// account and its campaigns
/// (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads/account-structure/create-and-manage-campaigns#search-for-campaigns>,
/// following `metadata.nextPageToken`). Days a campaign neither spent nor was clicked are
/// left out.
pub async fn spend(
    http: &Outbound,
    with: (&OAuthApp, &OAuthGrant),
    account: &str,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, String> {
    let day = |d: NaiveDate| format!("(year:{},month:{},day:{})", d.year(), d.month(), d.day());
    let query = format!(
        "adAnalytics?q=analytics&pivot=CAMPAIGN&timeGranularity=DAILY&dateRange=(start:{},end:{})&accounts=List(urn%3Ali%3AsponsoredAccount%3A{account})&fields=dateRange,pivotValues,costInLocalCurrency,clicks,impressions",
        day(from),
        day(to)
    );
    let analytics = call(http, with, &query).await?;
    let currency = call(http, with, &format!("adAccounts/{account}")).await?["currency"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let names = campaign_names(http, with, account).await?;
    let mut rows = Vec::new();
    for element in analytics["elements"].as_array().into_iter().flatten() {
        let start = &element["dateRange"]["start"];
        let date = [&start["year"], &start["month"], &start["day"]].map(Value::as_u64);
        let date = match date {
            [Some(y), Some(m), Some(d)] => NaiveDate::from_ymd_opt(y as i32, m as u32, d as u32),
            _ => None,
        }
        .ok_or("LinkedIn's analytics gave a row without its day")?;
        let id = element["pivotValues"][0]
            .as_str()
            .and_then(|urn| urn.strip_prefix("urn:li:sponsoredCampaign:"))
            .ok_or("LinkedIn's analytics gave a row without its campaign")?;
        let cost = element["costInLocalCurrency"].as_str().unwrap_or("0");
        let cost_micros = leadtrack_core::spend::micros(cost)
            .ok_or_else(|| format!("LinkedIn's analytics gave the cost {cost:?}"))?;
        let clicks = element["clicks"].as_u64();
        if cost_micros == 0 && clicks.unwrap_or_default() == 0 {
            continue;
        }
        rows.push(SpendRow {
            date,
            source: SpendPlatform::Linkedin.source().to_owned(),
            medium: "paid_social".to_owned(),
            account: account.to_owned(),
            campaign_id: Some(id.to_owned()),
            campaign: names.get(id).cloned().unwrap_or_else(|| id.to_owned()),
            currency: currency.clone(),
            cost_micros,
            clicks,
            impressions: element["impressions"].as_u64(),
        });
    }
    Ok(rows)
}

/// The most pages of campaigns one read follows (1,000 a page).
const CAMPAIGN_PAGES: usize = 20;

/// The names of the account's campaigns, by id.
async fn campaign_names(
    http: &Outbound,
    with: (&OAuthApp, &OAuthGrant),
    account: &str,
) -> Result<std::collections::HashMap<String, String>, String> {
    let mut names = std::collections::HashMap::new();
    let mut token: Option<String> = None;
    for _ in 0..CAMPAIGN_PAGES {
        let mut query = format!("adAccounts/{account}/adCampaigns?q=search&pageSize=1000");
        if let Some(token) = &token {
            let token: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
            query.push_str(&format!("&pageToken={token}"));
        }
        let page = call(http, with, &query).await?;
        for campaign in page["elements"].as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) = (campaign["id"].as_i64(), campaign["name"].as_str()) {
                names.insert(id.to_string(), name.to_owned());
            }
        }
        token = page["metadata"]["nextPageToken"]
            .as_str()
            .map(str::to_owned);
        if token.is_none() {
            break;
        }
    }
    Ok(names)
}
