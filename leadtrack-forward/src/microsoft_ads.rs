//! Microsoft Advertising, through the Campaign Management API's offline conversions.
//!
//! `POST {base}/CampaignManagement/v13/OfflineConversions/Apply` with an OAuth access token
//! (`Authorization: Bearer`) and the `DeveloperToken`, `CustomerId` and `CustomerAccountId`
//! headers, one `OfflineConversion` per request: the Microsoft click id, the conversion goal's
//! name, the time, value and currency, and the hashed email and phone
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

use chrono::{DateTime, Utc};
use leadtrack_core::integration::MicrosoftAdsSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::{DeliveryAction, IntegrationKind};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::normalize::{self, Rules};
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where conversions go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://campaign.api.bingads.microsoft.com";
/// The Microsoft identity platform's token endpoint.
pub const DEFAULT_TOKEN_URL: &str = "https://login.microsoftonline.com/common/oauth2/v2.0/token";
/// The scope of the Advertising API, with `offline_access` for refresh tokens.
const SCOPE: &str = "https://ads.microsoft.com/msads.manage offline_access";
/// Error codes worth a retry: an internal error, the call rate exceeded.
const TRANSIENT_CODES: [i64; 2] = [0, 117];

/// The `ApplyOfflineConversions` body for `job`, to the conversion goal `conversion`.
pub fn payload(job: &ClaimedJob, conversion: &str) -> Value {
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    let mut offline = Map::new();
    offline.insert("ConversionName".into(), json!(conversion));
    offline.insert(
        "ConversionTime".into(),
        json!(leadtrack_core::time::format(&job.job.converted_at)),
    );
    if let Some(id) = lead.attribution("msclkid") {
        offline.insert("MicrosoftClickId".into(), json!(id));
    }
    if let Some(cents) = job.job.price {
        offline.insert("ConversionValue".into(), json!(cents as f64 / 100.0));
        offline.insert("ConversionCurrencyCode".into(), json!(job.project.currency));
    }
    if let Some(hash) = lead
        .user("email")
        .and_then(|email| normalize::hashed_email(email, Rules::Plain))
    {
        offline.insert("HashedEmailAddress".into(), json!(hash));
    }
    if let Some(hash) = lead
        .user("phone")
        .and_then(|phone| normalize::hashed_phone(phone, region, Rules::Plain))
    {
        offline.insert("HashedPhoneNumber".into(), json!(hash));
    }
    json!({"OfflineConversions": [offline]})
}

/// The `ApplyOfflineConversionAdjustments` body restating `job`'s conversion to its new
/// price, at `now`; `None` without a price. Per
/// <https://learn.microsoft.com/en-us/advertising/campaign-management-service/offlineconversionadjustment?view=bingads-13>,
/// the conversion name, its time and the click id identify the conversion applied before;
/// "Restate" requires `AdjustmentValue`, and "the adjustment time cannot be earlier than
/// the original offline conversion date and time".
pub fn adjustment(job: &ClaimedJob, conversion: &str, now: DateTime<Utc>) -> Option<Value> {
    let cents = job.job.price?;
    let click_id = job.lead.data.attribution("msclkid")?;
    Some(json!({"OfflineConversionAdjustments": [{
        "AdjustmentCurrencyCode": job.project.currency,
        "AdjustmentTime": leadtrack_core::time::format(&now.max(job.job.converted_at)),
        "AdjustmentType": "Restate",
        "AdjustmentValue": cents as f64 / 100.0,
        "ConversionName": conversion,
        "ConversionTime": leadtrack_core::time::format(&job.job.converted_at),
        "MicrosoftClickId": click_id,
    }]}))
}

/// One error of an answer.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ApiError {
    #[serde(default)]
    code: Option<i64>,
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
pub(crate) fn classify(answer: &Answer, secrets: &[&str]) -> Outcome {
    let errors = serde_json::from_slice::<Errors>(&answer.body)
        .map(Errors::all)
        .unwrap_or_default();
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
pub(crate) fn grant(settings: &MicrosoftAdsSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: settings.client_secret.as_ref().map(|s| s.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: Some(SCOPE),
    }
}

/// Where offline conversions are applied.
const APPLY_PATH: &str = "/CampaignManagement/v13/OfflineConversions/Apply";
/// Where adjustments to applied offline conversions go.
const ADJUST_PATH: &str = "/CampaignManagement/v13/OfflineConversionAdjustments/Apply";

/// Posts `body` to `path` (offline conversions or their adjustments), with a token and the
/// account headers.
pub(crate) async fn apply(
    http: &reqwest::Client,
    tokens: &TokenCache,
    settings: &MicrosoftAdsSettings,
    path: &str,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, path);
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        http.post(&url)
            .bearer_auth(token)
            .header("DeveloperToken", settings.developer_token.expose())
            .header("CustomerId", &settings.customer_id)
            .header("CustomerAccountId", &settings.account_id)
            .json(body)
    })
    .await
}

/// The credentials of the settings, for scrubbing.
pub(crate) fn secrets(settings: &MicrosoftAdsSettings) -> Vec<&str> {
    let mut secrets = vec![
        settings.developer_token.expose(),
        settings.refresh_token.expose(),
    ];
    secrets.extend(settings.client_secret.as_ref().map(|s| s.expose()));
    secrets
}

/// Does `action` for `job` at Microsoft Advertising: applies the offline conversion,
/// restates its value, or (for `lost`) applies `lost` where it maps to a goal and then
/// retracts the label conversions Microsoft has.
pub(crate) async fn deliver(
    (http, tokens, settings): (&reqwest::Client, &TokenCache, &MicrosoftAdsSettings),
    job: &ClaimedJob,
    action: DeliveryAction,
    now: DateTime<Utc>,
) -> Outcome {
    if let Some(skip) = leadtrack_core::rules::skip_reason(
        IntegrationKind::MicrosoftAds,
        &job.lead,
        job.job.converted_at,
    ) {
        return Outcome::skipped(skip.reason);
    }
    let goal = job.mapping().microsoft_ads_conversion.as_deref();
    let mut requests = Vec::new();
    match (action, goal) {
        (DeliveryAction::Send | DeliveryAction::Retract, Some(goal)) => {
            requests.push((APPLY_PATH, payload(job, goal)));
        }
        (DeliveryAction::Restate, Some(goal)) => match adjustment(job, goal, now) {
            Some(body) => requests.push((ADJUST_PATH, body)),
            None => return Outcome::skipped("a restatement needs a price"),
        },
        (DeliveryAction::Send | DeliveryAction::Restate, None) => {
            return Outcome::skipped(
                "the conversion is not mapped to a Microsoft Advertising goal",
            );
        }
        (DeliveryAction::Retract, None) => {}
    }
    if action == DeliveryAction::Retract {
        requests.extend(retraction(job, now).map(|body| (ADJUST_PATH, body)));
    }
    let mut outcome = Outcome::skipped("nothing to retract");
    for (path, body) in requests {
        outcome = match apply(http, tokens, settings, path, &body).await {
            Ok(answer) => classify(&answer, &secrets(settings)),
            Err(failure) => failure,
        };
        if !matches!(outcome, Outcome::Delivered { .. }) {
            break;
        }
    }
    outcome
}

/// The `ApplyOfflineConversionAdjustments` body retracting, at `now`, each label conversion
/// of a `lost` job that Microsoft has: "Retract" takes no value; the goal, the conversion's
/// time and the click id name it
/// (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/offlineconversionadjustment?view=bingads-13>).
pub fn retraction(job: &ClaimedJob, now: DateTime<Utc>) -> Option<Value> {
    let click_id = job.lead.data.attribution("msclkid")?;
    let adjustments: Vec<Value> = job
        .job
        .retracts
        .iter()
        .filter(|r| r.sent_to.contains(&IntegrationKind::MicrosoftAds))
        .filter_map(|r| {
            Some(json!({
                "AdjustmentTime": leadtrack_core::time::format(&now.max(r.converted_at)),
                "AdjustmentType": "Retract",
                "ConversionName": r.microsoft_ads_conversion.as_deref()?,
                "ConversionTime": leadtrack_core::time::format(&r.converted_at),
                "MicrosoftClickId": click_id,
            }))
        })
        .collect();
    (!adjustments.is_empty()).then(|| json!({"OfflineConversionAdjustments": adjustments}))
}
