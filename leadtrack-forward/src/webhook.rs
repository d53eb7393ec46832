//! Signed JSON webhooks: the conversion webhook (a rating, posted to the integration's
//! URL) and lead webhooks (each event a webhook subscribes to, posted to its URL).
//!
//! The body is a JSON event; the header `X-Leadtrack-Signature: t=<unix>,v1=<hex>` carries
//! the HMAC-SHA256, keyed with the webhook's secret, of `"<t>.<body>"`. A receiver
//! recomputes it over the raw body to verify the origin, and rejects old `t` values to
//! refuse replays. `X-Leadtrack-Event` repeats the event id, stable across retries, for
//! receivers that deduplicate.

use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::api::{Rating, WebhookBody, WebhookLabel, rating_event};
use leadtrack_core::integration::{Secret, WebhookSettings};
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::{ConversionId, DeliveryAction, IntegrationKind};
use leadtrack_core::webhook::ClaimedWebhookEvent;
use leadtrack_core::webhook::WebhookEvent;
use sha2::Sha256;
use uuid::Uuid;

use crate::outcome::{self, Answer, Outcome};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Leadtrack-Signature";
/// The event id header.
pub const EVENT_HEADER: &str = "X-Leadtrack-Event";

/// The event `action` posts for `job`: `lead.converted` for a label, `lead.lost` for
/// `lost`, with the job's event id and the conversion's, at the conversion's time.
pub fn payload(job: &ClaimedJob, action: DeliveryAction) -> WebhookBody {
    let rating = Rating {
        job_id: job.job.id,
        conversion_event_id: job.job.conversion_event_id,
        action,
        conversion_id: job.job.conversion_id,
        label: job.label.as_ref(),
        price: job.job.price,
    };
    WebhookBody::new(
        rating_event(job.job.conversion_id),
        job.job.event_id,
        job.job.converted_at,
        &job.project,
        &job.lead,
        Some(rating),
    )
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

/// Does `action` for `job` at the conversion webhook: posts the conversion (a
/// restatement says `restated: true`); a retraction posts `lost` where `lost` maps to the
/// webhook, then each label conversion it withdraws, `retracted: true`. Each post has an
/// event id of its own, the same in every attempt, so a receiver that saw one already
/// drops it when a later post of the delivery failed and it is tried again.
pub(crate) async fn deliver(
    http: &reqwest::Client,
    settings: &WebhookSettings,
    job: &ClaimedJob,
    action: DeliveryAction,
    now: DateTime<Utc>,
) -> Outcome {
    let mut bodies = Vec::new();
    if action != DeliveryAction::Retract || job.mapping().webhook {
        let own = match action {
            DeliveryAction::Retract => DeliveryAction::Send,
            other => other,
        };
        bodies.push((job.job.event_id, payload(job, own)));
    }
    if action == DeliveryAction::Retract {
        bodies.extend(retractions(job));
    }
    let mut outcome = Outcome::skipped("nothing to post");
    for (event_id, body) in bodies {
        let post = Post {
            url: &settings.url,
            secret: &settings.secret,
            event_id: &event_id.to_string(),
            body: body.to_json(),
        };
        outcome = send(http, post, now).await;
        if !matches!(outcome, Outcome::Delivered { .. }) {
            break;
        }
    }
    outcome
}

/// The retraction posts of a `lost` job: for each label conversion the webhook has, the
/// conversion again (its id, time and price) with `retracted: true`, under an event id
/// derived from the job's and the conversion's.
pub fn retractions(job: &ClaimedJob) -> Vec<(Uuid, WebhookBody)> {
    job.job
        .retracts
        .iter()
        .filter(|r| r.sent_to.contains(&IntegrationKind::Webhook))
        .map(|r| {
            let event_id = Uuid::new_v5(&job.job.event_id, r.conversion_event_id.as_bytes());
            let rating = Rating {
                job_id: job.job.id,
                conversion_event_id: r.conversion_event_id,
                action: DeliveryAction::Retract,
                conversion_id: ConversionId::Label(r.label_id),
                label: None,
                price: r.price,
            };
            let event = WebhookEvent::LeadConverted;
            let at = r.converted_at;
            let mut body =
                WebhookBody::new(event, event_id, at, &job.project, &job.lead, Some(rating));
            if let Some(conversion) = &mut body.conversion {
                conversion.label = Some(WebhookLabel {
                    id: r.label_id,
                    name: r.label_name.clone(),
                    mark_as_done: r.mark_as_done,
                });
            }
            (event_id, body)
        })
        .collect()
}

/// Posts a lead webhook's claimed event: its body as stored, signed with the webhook's
/// secret as it is now.
pub(crate) async fn deliver_event(
    http: &reqwest::Client,
    claimed: &ClaimedWebhookEvent,
    now: DateTime<Utc>,
) -> Outcome {
    let post = Post {
        url: &claimed.webhook.url,
        secret: &claimed.webhook.secret,
        event_id: &claimed.event_id.to_string(),
        body: claimed.body.clone(),
    };
    send(http, post, now).await
}

/// Posts and reads the outcome off the answer's status.
async fn send(http: &reqwest::Client, post: Post<'_>, now: DateTime<Utc>) -> Outcome {
    let secret = post.secret;
    match self::post(http, post, now).await {
        Ok(answer) => answer.by_status(|| error_of(&answer, secret)),
        Err(failure) => failure,
    }
}

/// What a failed answer says, without the secret.
pub(crate) fn error_of(answer: &Answer, secret: &Secret) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[secret.expose()],
    )
}

/// One signed post to a webhook.
pub(crate) struct Post<'a> {
    /// Where to.
    pub(crate) url: &'a str,
    /// What signs it.
    pub(crate) secret: &'a Secret,
    /// The event's id, in its own header.
    pub(crate) event_id: &'a str,
    /// The JSON body.
    pub(crate) body: String,
}

/// Posts `post`, signed at `now`.
pub(crate) async fn post(
    http: &reqwest::Client,
    Post {
        url,
        secret,
        event_id,
        body,
    }: Post<'_>,
    now: DateTime<Utc>,
) -> Result<Answer, Outcome> {
    let body = body.into_bytes();
    let request = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            SIGNATURE_HEADER,
            signature(secret.expose(), now.timestamp(), &body),
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
