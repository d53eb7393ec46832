//! Microsoft Advertising, through the Campaign Management API's offline conversions.
//!
//! `POST {base}/CampaignManagement/v13/OfflineConversions/Apply` with an OAuth access token
//! (`Authorization: Bearer`) and the `DeveloperToken`, `CustomerId` and `CustomerAccountId`
//! headers, up to 1,000 `OfflineConversion`s per request, each with the Microsoft click id,
//! the conversion goal's name, the time, value and currency, and the hashed email and phone
//! (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions>,
//! <https://learn.microsoft.com/en-us/advertising/campaign-management-service/offlineconversion>).
//! A conversion with the same click id, name and time is applied once, so a resent
//! delivery (the time is the conversion's first rating) is not counted twice. A new price
//! for it is a `Restate` adjustment, `POST {base}/CampaignManagement/v13/
//! OfflineConversionAdjustments/Apply`, naming the same click id, name and time
//! (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversionadjustments?view=bingads-13>).
//!
//! Errors come as `PartialErrors` of a 200 answer, or as the fault body of a 4xx or 5xx
//! (`OperationErrors` or `Errors`); each has a numeric `Code`. Internal errors (0) and the
//! call rate limit (117) are retried, as is any 429 or 5xx; other codes fail the delivery.
//!
//! This module holds the requests and how their answers read; a job's delivery is
//! `leadtrack-forward`'s. Here too: the account and offline conversion goal pickers
//! ([`accounts`], [`offline_goals`]).

use leadtrack_core::integration::MicrosoftAdsSettings;
use leadtrack_core::oauth::ClientAuth;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant};
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::with_grant;
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where conversions go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://campaign.api.bingads.microsoft.com";
/// The most offline conversions one `ApplyOfflineConversions` request carries: "You can
/// apply up to 1,000 offline conversions per call"
/// (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions>).
pub const BATCH_SIZE: usize = 1_000;
/// The Microsoft identity platform's token endpoint.
pub const DEFAULT_TOKEN_URL: &str = "https://login.microsoftonline.com/common/oauth2/v2.0/token";
/// The scope of the Advertising API, with `offline_access` for refresh tokens.
const SCOPE: &str = "https://ads.microsoft.com/msads.manage offline_access";
/// Error codes worth a retry: an internal error, the call rate exceeded.
const TRANSIENT_CODES: [i64; 2] = [0, 117];

/// One error of an answer.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ApiError {
    #[serde(default)]
    code: Option<i64>,
    /// Which conversion of the request it is about, for a partial or batch error.
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    error_code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// The errors an answer carries: `PartialErrors` of a success, `OperationErrors`,
/// `BatchErrors` or `Errors` of a fault.
#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct Errors {
    partial_errors: Option<Vec<ApiError>>,
    operation_errors: Option<Vec<ApiError>>,
    batch_errors: Option<Vec<ApiError>>,
    errors: Option<Vec<ApiError>>,
}

impl Errors {
    fn all(self) -> Vec<ApiError> {
        [
            self.partial_errors,
            self.operation_errors,
            self.batch_errors,
            self.errors,
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect()
    }
}

/// Reads Microsoft's answer: applied, or errors whose codes say whether a retry can help.
pub fn classify(answer: &Answer, secrets: &[&str]) -> Outcome {
    let errors = read_errors(answer);
    judge(answer, &errors.iter().collect::<Vec<_>>(), secrets)
}

/// Reads Microsoft's answer to `count` offline conversions: each has the errors that name
/// its `Index`, with those of the whole request; none on a success means it was applied
/// (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions>:
/// "the list of errors that correspond to any offline conversions that could not be
/// applied", by index).
pub fn classify_each(answer: &Answer, secrets: &[&str], count: usize) -> Vec<Outcome> {
    let errors = read_errors(answer);
    (0..count)
        .map(|index| {
            let own: Vec<&ApiError> = errors
                .iter()
                .filter(|error| error.index.is_none_or(|at| at == index))
                .collect();
            judge(answer, &own, secrets)
        })
        .collect()
}

fn read_errors(answer: &Answer) -> Vec<ApiError> {
    serde_json::from_slice::<Errors>(&answer.body)
        .map(Errors::all)
        .unwrap_or_default()
}

/// The outcome of an answer with `errors`: applied when it succeeded without any.
fn judge(answer: &Answer, errors: &[&ApiError], secrets: &[&str]) -> Outcome {
    if answer.is_success() && errors.is_empty() {
        return Outcome::Delivered {
            status: answer.status,
        };
    }
    if errors.is_empty() {
        return answer.by_status(|| {
            outcome::scrub(
                format!("HTTP {}: {}", answer.status, answer.snippet()),
                secrets,
            )
        });
    }
    let described: Vec<String> = errors
        .iter()
        .map(|error| {
            format!(
                "{} {}: {}",
                error.code.map_or_else(|| "?".to_owned(), |c| c.to_string()),
                error.error_code.as_deref().unwrap_or(""),
                error.message.as_deref().unwrap_or("")
            )
        })
        .collect();
    let error = outcome::scrub(
        outcome::short(&format!("HTTP {}: {}", answer.status, described.join("; "))),
        secrets,
    );
    let transient = outcome::is_retryable_status(answer.status)
        || errors
            .iter()
            .all(|e| e.code.is_some_and(|code| TRANSIENT_CODES.contains(&code)));
    if transient {
        Outcome::Retry {
            status: Some(answer.status),
            error,
            retry_after: answer.retry_after,
        }
    } else {
        Outcome::Failed {
            status: Some(answer.status),
            error,
        }
    }
}

/// The settings' refresh-token grant at the Microsoft identity platform.
pub fn grant(settings: &MicrosoftAdsSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: settings.client_secret.as_ref().map(|s| s.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: Some(SCOPE),
        auth: ClientAuth::Form,
    }
}

/// Where offline conversions are applied.
pub const APPLY_PATH: &str = "/CampaignManagement/v13/OfflineConversions/Apply";
/// Where adjustments to applied offline conversions go.
pub const ADJUST_PATH: &str = "/CampaignManagement/v13/OfflineConversionAdjustments/Apply";

/// Posts `body` to `path` (offline conversions or their adjustments), with a token and the
/// account headers.
pub async fn apply(
    http: &Outbound,
    tokens: &TokenCache,
    settings: &MicrosoftAdsSettings,
    path: &str,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, path);
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        Ok(http
            .post(&url)?
            .bearer_auth(token)
            .header("DeveloperToken", settings.developer_token.expose())
            .header("CustomerId", &settings.customer_id)
            .header("CustomerAccountId", &settings.account_id)
            .json(body))
    })
    .await
}

/// The credentials of the settings, for scrubbing.
pub fn secrets(settings: &MicrosoftAdsSettings) -> Vec<&str> {
    let mut secrets = vec![
        settings.developer_token.expose(),
        settings.refresh_token.expose(),
    ];
    secrets.extend(settings.client_secret.as_ref().map(|s| s.expose()));
    secrets
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
async fn call(
    http: &Outbound,
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
            .post(url)?
            .bearer_auth(token)
            .header("DeveloperToken", developer_token.expose())
            .json(&body);
        Ok(match account {
            Some((customer, account)) => request
                .header("CustomerId", customer)
                .header("CustomerAccountId", account),
            None => request,
        })
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
pub async fn accounts(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MicrosoftAccount>, String> {
    let base = format!("{}/CustomerManagement/v13", app.endpoints.api);
    let with = (app, grant);
    let user = call(
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
    let found = call(http, with, &format!("{base}/Accounts/Search"), search, None).await?;
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
pub async fn offline_goals(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
    (campaign_base, customer, account): (&str, &str, &str),
) -> Result<Vec<String>, String> {
    let url = format!(
        "{}/CampaignManagement/v13/ConversionGoals/QueryByIds",
        campaign_base.trim_end_matches('/')
    );
    let body = json!({"ConversionGoalIds": null, "ConversionGoalTypes": "OfflineConversion"});
    let found = call(http, (app, grant), &url, body, Some((customer, account))).await?;
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
