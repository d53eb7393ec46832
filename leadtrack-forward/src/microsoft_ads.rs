//! A conversion delivered to Microsoft Advertising as an offline conversion (the request
//! and answer rules are `leadtrack_platforms::microsoft_ads`'s): sent, restated with a
//! `Restate` adjustment when its price changes, retracted when its rating is undone.

use chrono::{DateTime, Utc};
use leadtrack_core::integration::MicrosoftAdsSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::{DeliveryAction, IntegrationKind};
use serde_json::{Map, Value, json};

use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::oauth::TokenCache;
use leadtrack_platforms::outcome::Outcome;

use crate::answer::Answered;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::microsoft_ads::{
    ADJUST_PATH, APPLY_PATH, apply, classify, classify_each, secrets,
};

/// The `ApplyOfflineConversions` body for `job`, to the conversion goal `conversion`.
pub(crate) fn payload(job: &ClaimedJob, conversion: &str) -> Value {
    json!({"OfflineConversions": [offline_conversion(job, conversion)]})
}

/// The offline conversion of `job`, to the conversion goal `conversion`.
fn offline_conversion(job: &ClaimedJob, conversion: &str) -> Value {
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
    Value::Object(offline)
}

/// The offline conversion `job` sends, or why it sends none.
pub(crate) fn prepare(job: &ClaimedJob) -> Result<Value, Outcome> {
    if let Some(skip) = leadtrack_core::rules::skip_reason(
        IntegrationKind::MicrosoftAds,
        &job.lead,
        job.job.converted_at,
    ) {
        return Err(Outcome::skipped(skip.reason));
    }
    match job.mapping().microsoft_ads_conversion.as_deref() {
        Some(goal) => Ok(offline_conversion(job, goal)),
        None => Err(Outcome::skipped(
            "the conversion is not mapped to a Microsoft Advertising goal",
        )),
    }
}

/// Applies `conversions` in one request; Microsoft answers for each by its index.
pub(crate) async fn send(
    (http, tokens, settings): (&Outbound, &TokenCache, &MicrosoftAdsSettings),
    conversions: Vec<Value>,
) -> Answered {
    let count = conversions.len();
    let body = json!({"OfflineConversions": conversions});
    match apply(http, tokens, settings, APPLY_PATH, &body).await {
        Ok(answer) => Answered::Each(classify_each(&answer, &secrets(settings), count)),
        Err(failure) => Answered::All(failure),
    }
}

/// The `ApplyOfflineConversionAdjustments` body restating `job`'s conversion to its new
/// price, at `now`; `None` without a price. Per
/// <https://learn.microsoft.com/en-us/advertising/campaign-management-service/offlineconversionadjustment?view=bingads-13>,
/// the conversion name, its time and the click id identify the conversion applied before;
/// "Restate" requires `AdjustmentValue`, and "the adjustment time cannot be earlier than
/// the original offline conversion date and time".
pub(crate) fn adjustment(job: &ClaimedJob, conversion: &str, now: DateTime<Utc>) -> Option<Value> {
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

/// Does `action` for `job` at Microsoft Advertising, alone: applies the offline
/// conversion, restates its value, or (for `lost`) applies `lost` where it maps to a goal
/// and then retracts the label conversions Microsoft has.
pub(crate) async fn deliver(
    (http, tokens, settings): (&Outbound, &TokenCache, &MicrosoftAdsSettings),
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
pub(crate) fn retraction(job: &ClaimedJob, now: DateTime<Utc>) -> Option<Value> {
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
