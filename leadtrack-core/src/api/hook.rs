//! The REST hooks' answers (`/api/hooks`, for Zapier, Make and n8n), and the sample
//! payload of each event that those tools show while a person maps its fields.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use super::{Lead, WebhookBody, WebhookConversion, WebhookLabel};
use crate::project::Project;
use crate::types::{ConversionId, JobId};
use crate::webhook::{Webhook, WebhookEvent, WebhookKind};

/// A REST hook, as `POST /api/hooks` and `GET /api/hooks` answer it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hook {
    /// Its id, which `DELETE /api/hooks/{id}` names.
    pub id: Uuid,
    /// The event posted to it.
    pub event: WebhookEvent,
    /// Where the event is posted.
    pub target_url: String,
    /// When it was subscribed.
    #[serde(with = "crate::time::rfc3339_millis")]
    pub created_at: DateTime<Utc>,
    /// The secret its posts are signed with (`X-Leadtrack-Signature`): in the answer to
    /// the subscription only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl Hook {
    /// The REST hook `webhook` is, without its secret; `None` for a webhook added in
    /// the dashboard or on the command line.
    pub fn of(webhook: &Webhook) -> Option<Self> {
        let event = webhook.events.iter().next()?;
        (webhook.kind == WebhookKind::RestHook).then(|| Self {
            id: webhook.id,
            event,
            target_url: webhook.url.clone(),
            created_at: webhook.created_at,
            secret: None,
        })
    }

    /// The answer to its subscription: with its secret.
    pub fn subscribed(webhook: &Webhook) -> Option<Self> {
        Some(Self {
            secret: Some(webhook.secret.expose().to_owned()),
            ..Self::of(webhook)?
        })
    }
}

/// `GET /api/hooks`: the key's project's REST hooks, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetHooksResponse {
    /// The hooks.
    pub hooks: Vec<Hook>,
}

/// `GET /api/hooks/sample?event=…`: one made-up `event` of `project`, as a hook would
/// receive it; a rating's label is a made-up `Customer`. Its ids are fixed, so a tool that
/// deduplicates by id shows it once.
pub fn sample(event: WebhookEvent, project: &Project, now: DateTime<Utc>) -> WebhookBody {
    sample_of(event, (&project.public_id, &project.currency), now)
}

/// [`sample`] for the project of public id and currency `(public_id, currency)`.
fn sample_of(
    event: WebhookEvent,
    (public_id, currency): (&str, &str),
    now: DateTime<Utc>,
) -> WebhookBody {
    let rated = matches!(event, WebhookEvent::LeadConverted | WebhookEvent::LeadLost);
    // The made-up label's id.
    let customer = Uuid::from_u128(0x5a3b_1e00);
    let conversion_id = match event {
        WebhookEvent::LeadLost => ConversionId::Lost,
        _ => ConversionId::Label(customer),
    };
    let conversion = rated.then(|| WebhookConversion {
        job_id: JobId(981),
        conversion_event_id: Uuid::new_v5(&Uuid::NAMESPACE_OID, b"leadtrack sample conversion"),
        restated: false,
        retracted: false,
        conversion_id,
        label: (event == WebhookEvent::LeadConverted).then(|| WebhookLabel {
            id: customer,
            name: "Customer".to_owned(),
            mark_as_done: true,
        }),
        price: (event == WebhookEvent::LeadConverted).then_some(120_000),
        currency: currency.to_owned(),
    });
    WebhookBody {
        event,
        id: Uuid::new_v5(&Uuid::NAMESPACE_OID, event.as_ref().as_bytes()),
        occurred_at: now,
        project_id: public_id.to_owned(),
        lead: sample_lead(event, rated.then_some(conversion_id), now),
        conversion,
    }
}

/// The lead of [`sample`]: a web-form lead from a Google Ads click, or what erasing it
/// leaves.
fn sample_lead(event: WebhookEvent, rating: Option<ConversionId>, now: DateTime<Utc>) -> Lead {
    let status = match rating {
        Some(ConversionId::Lost) => "lost",
        Some(_) => "rated",
        None => "open",
    };
    let erased = event == WebhookEvent::LeadErased;
    let person = |value: serde_json::Value| if erased { json!(null) } else { value };
    let attribution = if erased {
        json!({"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring_sale"})
    } else {
        json!({
            "utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring_sale",
            "gclid": "EAIaIQobChMI8sample", "landingPage": "https://www.example.com/offer"
        })
    };
    let lead = json!({
        "id": 1042,
        "status": status,
        "formName": "Contact",
        "firstName": person(json!("Ada")),
        "lastName": person(json!("Lovelace")),
        "phone": person(json!("+44 20 7946 0958")),
        "email": person(json!("ada@example.com")),
        "companyName": person(json!("Analytical Engines Ltd")),
        "price": rating.filter(|id| *id != ConversionId::Lost).map(|_| 120_000),
        "note": null,
        "formData": if erased { json!({"formName": "Contact"}) } else {
            json!({"formName": "Contact", "message": "Please call me about the offer."})
        },
        "userData": person(json!({
            "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
            "phone": "+44 20 7946 0958", "companyName": "Analytical Engines Ltd"
        })),
        "attributionData": attribution,
        "channelFlow": null,
        "uniqueIdentifier": person(json!("visitor-7f3a")),
        "createdAt": crate::time::format(&now),
        "conversionId": rating,
        "spamReason": null,
        "duplicateOf": null,
        "assignee": null,
        "nextStepAt": null,
    });
    // A literal of the lead's own shape always reads back; the test below proves it.
    serde_json::from_value(lead).unwrap_or_else(|err| unreachable!("the sample lead: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::LeadStatus;
    use strum::VariantArray;

    #[test]
    fn every_event_has_a_sample_of_its_kind() {
        let project = ("prj_sample", "EUR");
        for event in WebhookEvent::VARIANTS {
            let body = sample_of(*event, project, Utc::now());
            assert_eq!(body.event, *event);
            assert_eq!(body.project_id, "prj_sample");
            let json = serde_json::to_value(&body).unwrap();
            assert_eq!(json["type"], event.as_ref());
            assert_eq!(json["lead"]["id"], 1042);
            let (status, email, conversion) = match event {
                WebhookEvent::LeadConverted => (LeadStatus::Rated, true, Some("Customer")),
                WebhookEvent::LeadLost => (LeadStatus::Lost, true, None),
                WebhookEvent::LeadErased => (LeadStatus::Open, false, None),
                _ => (LeadStatus::Open, true, None),
            };
            assert_eq!(body.lead.status, status, "{event}");
            assert_eq!(body.lead.email.is_some(), email, "{event}");
            assert_eq!(json["label"]["name"].as_str(), conversion, "{event}");
        }
        let lost = sample_of(WebhookEvent::LeadLost, project, Utc::now());
        let lost = serde_json::to_value(lost).unwrap();
        assert_eq!(
            (&lost["conversionId"], &lost["currency"]),
            (&json!("lost"), &json!("EUR"))
        );
        assert_eq!(lost["lead"]["conversionId"], "lost");
    }
}
