//! A signed JSON webhook: the conversion, posted to the project's URL.
//!
//! The body is a JSON event; the header `X-Leadtrack-Signature: t=<unix>,v1=<hex>` carries
//! the HMAC-SHA256, keyed with the project's webhook secret, of `"<t>.<body>"`. A receiver
//! recomputes it over the raw body to verify the origin, and rejects old `t` values to
//! refuse replays. `X-Leadtrack-Event` repeats the event id, stable across retries, for
//! receivers that deduplicate.

use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::api::Lead;
use leadtrack_core::integration::WebhookSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::ConversionId;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::outcome::{self, Answer, Outcome};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Leadtrack-Signature";
/// The event id header.
pub const EVENT_HEADER: &str = "X-Leadtrack-Event";

/// The event posted for `job`.
///
/// `type` is `lead.converted` for a label and `lead.lost` for `lost`.
pub fn payload(job: &ClaimedJob) -> Value {
    let kind = match job.job.conversion_id {
        ConversionId::Lost => "lead.lost",
        ConversionId::Label(_) | ConversionId::Open => "lead.converted",
    };
    let label = job
        .label
        .as_ref()
        .map(|label| json!({"id": label.id, "name": label.name, "markAsDone": label.mark_as_done}));
    json!({
        "type": kind,
        "id": job.job.event_id,
        "jobId": job.job.id.0,
        "occurredAt": leadtrack_core::time::format(&job.job.created_at),
        "conversionId": job.job.conversion_id,
        "label": label,
        "price": job.job.price,
        "currency": job.project.currency,
        "projectId": job.project.public_id,
        "lead": Lead::from(&job.lead),
    })
}

/// `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes keys of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "t={timestamp},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// Posts `job` to the webhook.
pub(crate) async fn deliver(
    http: &reqwest::Client,
    settings: &WebhookSettings,
    job: &ClaimedJob,
    now: DateTime<Utc>,
) -> Outcome {
    let event_id = job.job.event_id.to_string();
    match post(http, settings, &event_id, &payload(job), now).await {
        Ok(answer) => answer.by_status(|| error_of(&answer, settings)),
        Err(failure) => failure,
    }
}

/// What a failed answer says, without the secret.
pub(crate) fn error_of(answer: &Answer, settings: &WebhookSettings) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[settings.secret.expose()],
    )
}

/// Posts `event`, signed at `now`, to the webhook.
pub(crate) async fn post(
    http: &reqwest::Client,
    settings: &WebhookSettings,
    event_id: &str,
    event: &Value,
    now: DateTime<Utc>,
) -> Result<Answer, Outcome> {
    let body = event.to_string().into_bytes();
    let request = http
        .post(&settings.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            SIGNATURE_HEADER,
            signature(settings.secret.expose(), now.timestamp(), &body),
        )
        .header(EVENT_HEADER, event_id)
        .body(body);
    outcome::send(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_of_timestamp_dot_body() {
        // The same construction as Stripe's `v1` scheme, checked against its known value.
        assert_eq!(
            signature("whsec_test", 1_700_000_000, br#"{"id":"evt_1"}"#),
            "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
        );
    }
}
