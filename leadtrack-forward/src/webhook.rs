//! Signed webhook deliveries (the signature and request rules are
//! `leadtrack_platforms::webhook`'s): a rating to the webhook integration, with its
//! retractions, and each lead webhook's events.

use chrono::{DateTime, Utc};
use leadtrack_core::api::{Rating, WebhookBody, WebhookLabel, rating_event};
use leadtrack_core::integration::WebhookSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::{ConversionId, DeliveryAction, IntegrationKind};
use leadtrack_core::webhook::ClaimedWebhookEvent;
use leadtrack_core::webhook::WebhookEvent;
use uuid::Uuid;

use leadtrack_platforms::outcome::Outcome;

use leadtrack_outbound::Outbound;
use leadtrack_platforms::webhook::{Post, error_of, post};

/// The event `action` posts for `job`: `lead.converted` for a label, `lead.lost` for
/// `lost`, with the job's event id and the conversion's, at the conversion's time.
pub(crate) fn payload(job: &ClaimedJob, action: DeliveryAction) -> WebhookBody {
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

/// Does `action` for `job` at the conversion webhook: posts the conversion (a
/// restatement says `restated: true`); a retraction posts `lost` where `lost` maps to the
/// webhook, then each label conversion it withdraws, `retracted: true`. Each post has an
/// event id of its own, the same in every attempt, so a receiver that saw one already
/// drops it when a later post of the delivery failed and it is tried again.
pub(crate) async fn deliver(
    http: &Outbound,
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
pub(crate) fn retractions(job: &ClaimedJob) -> Vec<(Uuid, WebhookBody)> {
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
    http: &Outbound,
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
async fn send(http: &Outbound, post: Post<'_>, now: DateTime<Utc>) -> Outcome {
    let secret = post.secret;
    match self::post(http, post, now).await {
        Ok(answer) => answer.by_status(|| error_of(&answer, secret)),
        Err(failure) => failure,
    }
}
