//! A conversion delivered to LinkedIn's Conversions API (the request and answer rules are
//! `leadtrack_platforms::linkedin`'s): the conversion rule, the member's hashed email and
//! click id, the value, and the conversion's id as `eventId`.

use leadtrack_core::integration::LinkedinSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Value, json};

use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::oauth::TokenCache;
use leadtrack_platforms::outcome::Outcome;

use crate::answer::Answered;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::linkedin::{classify_each, post_batch};

/// The conversion event for `job`, to the conversion rule `conversion` (a URN).
pub(crate) fn payload(job: &ClaimedJob, conversion: &str) -> Value {
    let lead = &job.lead.data;
    let mut user_ids = Vec::new();
    if let Some(hash) = lead
        .user("email")
        .and_then(|email| normalize::hashed_email(email, Rules::Plain))
    {
        user_ids.push(json!({"idType": "SHA256_EMAIL", "idValue": hash}));
    }
    if let Some(id) = lead.attribution("li_fat_id") {
        user_ids.push(json!({"idType": "LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID", "idValue": id}));
    }
    let mut event = json!({
        "conversion": conversion,
        "conversionHappenedAt": job.job.converted_at.timestamp_millis(),
        "user": {"userIds": user_ids},
        "eventId": job.job.conversion_event_id.to_string(),
    });
    if let Some(cents) = job.job.price {
        event["conversionValue"] = json!({
            "currencyCode": job.project.currency,
            "amount": format!("{:.2}", cents as f64 / 100.0),
        });
    }
    event
}

/// The conversion event `job` sends to LinkedIn, or why it sends none.
pub(crate) fn prepare(job: &ClaimedJob) -> Result<Value, Outcome> {
    let Some(conversion) = job.mapping().linkedin_conversion.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a LinkedIn conversion rule",
        ));
    };
    if let Some(skip) = leadtrack_core::rules::skip_reason(
        IntegrationKind::Linkedin,
        &job.lead,
        job.job.converted_at,
    ) {
        return Err(Outcome::skipped(skip.reason));
    }
    Ok(payload(job, conversion))
}

/// Creates `events` in one request; LinkedIn answers for each.
pub(crate) async fn send(
    (http, tokens): (&Outbound, &TokenCache),
    settings: &LinkedinSettings,
    events: Vec<Value>,
) -> Answered {
    let count = events.len();
    match post_batch(http, tokens, settings, events).await {
        Ok(answer) => Answered::Each(classify_each(&answer, settings, count)),
        Err(failure) => Answered::All(failure),
    }
}
