//! A conversion delivered to Meta's Conversions API (the request and answer rules are
//! `leadtrack_platforms::meta`'s): a server event for the advertiser's own forms' leads, a
//! CRM event for Lead Ads leads, with the conversion's id as `event_id`.

use chrono::{DateTime, Utc};
use leadtrack_core::channel::touches;
use leadtrack_core::integration::{MetaActionSource, MetaSettings};
use leadtrack_core::job::ClaimedJob;
use serde_json::{Map, Value, json};

use leadtrack_platforms::normalize::{self, Rules};
use leadtrack_platforms::outcome::Outcome;

use crate::user_data;
use leadtrack_outbound::Outbound;
use leadtrack_platforms::meta::{
    classify, crm_event, max_event_age, meta_lead_id, post, with_id, with_test_code,
};

/// The Conversions API event of `job`, named `event_name`, with the settings'
/// `action_source`.
///
/// The event follows the server-event parameters of
/// <https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/server-event>
/// and the customer-information parameters of
/// <https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters>.
/// A lead from Meta Lead Ads (Instant Forms) is sent as a CRM event for conversion leads
/// instead ([`crm_event`]): Meta's payload specification for those says "Do not use this
/// specification for events not related to this optimization", which "only supports
/// native Lead Ads", so the advertiser's own forms' leads never are.
pub(crate) fn event(job: &ClaimedJob, event_name: &str, settings: &MetaSettings) -> Value {
    let lead = &job.lead.data;
    let region = job.project.region.as_deref();
    let mut custom_data = Map::new();
    if let Some(cents) = job.job.price {
        custom_data.insert("value".into(), json!(cents as f64 / 100.0));
        custom_data.insert("currency".into(), json!(job.project.currency));
    }
    if let Some(lead_id) = meta_lead_id(lead) {
        let at = job.job.converted_at;
        let event = crm_event(lead_id, lead, region, (event_name, at), custom_data);
        return with_id(event, &job.job.conversion_event_id.to_string());
    }
    let [email, phone] = user_data::contact_hashes(job, (Rules::Meta, Rules::Meta));
    let names = [
        (
            "fn",
            lead.user("firstName").and_then(normalize::hashed_name),
        ),
        ("ln", lead.user("lastName").and_then(normalize::hashed_name)),
    ];
    let device = &lead.device_data;
    let fbc = lead.meta_click_id(job.lead.created_at);
    let user_data = user_data::object(
        [("em", email), ("ph", phone)].into_iter().chain(names),
        true,
        [
            ("fbp", lead.attribution("fbp")),
            ("fbc", fbc.as_deref()),
            ("client_ip_address", device.ip_address.as_deref()),
            ("client_user_agent", device.user_agent.as_deref()),
        ],
    );
    let mut event = json!({
        "event_name": event_name,
        "event_time": job.job.converted_at.timestamp(),
        "action_source": settings.action_source,
        "event_id": job.job.conversion_event_id.to_string(),
        "user_data": user_data,
        "custom_data": custom_data,
    });
    // Meta requires the page of a website event: the last page the lead landed on.
    if settings.action_source == MetaActionSource::Website
        && let Some(page) = touches(lead)
            .into_iter()
            .rev()
            .find_map(|touch| touch.landing_page)
    {
        event["event_source_url"] = json!(page);
    }
    event
}

/// The event `job` sends to Meta, or why it sends none.
pub(crate) fn prepare(
    settings: &MetaSettings,
    job: &ClaimedJob,
    now: DateTime<Utc>,
) -> Result<Value, Outcome> {
    let Some(event_name) = job.mapping().meta_event.as_deref() else {
        return Err(Outcome::skipped(
            "the conversion is not mapped to a Meta event",
        ));
    };
    if now - job.job.converted_at > max_event_age() {
        return Err(Outcome::skipped(
            "The conversion was first rated more than 7 days ago, and Meta refuses events \
             older than that",
        ));
    }
    Ok(event(job, event_name, settings))
}

/// Sends `events` to the pixel in one request: Meta takes all of them or none.
pub(crate) async fn send(http: &Outbound, settings: &MetaSettings, events: Vec<Value>) -> Outcome {
    let body = with_test_code(json!({"data": events}), settings);
    match post(http, settings, &body).await {
        Ok(answer) => classify(&answer, &[settings.access_token.expose()]),
        Err(failure) => failure,
    }
}
