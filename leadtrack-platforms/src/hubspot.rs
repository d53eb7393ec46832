//! HubSpot's CRM API (v3), with a private app's access token (`Authorization: Bearer`):
//! a lead as a contact, its rating as a deal.
//!
//! - Contacts with an email are upserted by it, so one person is one contact however often
//!   their lead is sent or merged: `POST /crm/v3/objects/contacts/batch/upsert` with
//!   `idProperty: "email"`
//!   (<https://developers.hubspot.com/docs/api-reference/crm-contacts-v3/batch/upsert-contacts>).
//!   A lead without one is created once (`batch/create`) and updated after (`batch/update`);
//!   HubSpot needs an email, a first name or a last name
//!   (<https://developers.hubspot.com/docs/guides/api/crm/objects/contacts>).
//! - Deals are created once per lead, associated with the contact (association type 3,
//!   deal to contact, <https://developers.hubspot.com/docs/guides/api/crm/associations/associations-v4>),
//!   and moved after (`POST /crm/v3/objects/deals/batch/create`, `batch/update`,
//!   <https://developers.hubspot.com/docs/guides/api/crm/objects/deals>); `amount` in the
//!   currency's units, `deal_currency_code` its ISO code.
//! - The lead's id, source, campaign and click ids go in contact properties of leadtrack's
//!   own ([`PROPERTIES`]), made when the sync is connected
//!   (`POST /crm/v3/properties/contacts/batch/create`,
//!   <https://developers.hubspot.com/docs/guides/api/crm/properties>).
//! - Pipelines and their stages: `GET /crm/v3/pipelines/deals`
//!   (<https://developers.hubspot.com/docs/guides/api/crm/pipelines>).
//! - Private apps may make 100 to 190 requests per 10 seconds by plan, and more get `429`
//!   (<https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines>):
//!   requests are paced to the smallest plan's limits ([`QUOTA`]), and a `429` is retried
//!   after its `Retry-After`, or the worker's backoff.
//!
//! Records are written in batches of up to 100 inputs ([`BATCH`]), each traced by an
//! `objectWriteTraceId` its result comes back with.

use leadtrack_core::api::Lead;
use leadtrack_core::crm::CrmOptions;
use leadtrack_core::integration::Secret;
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::outcome::{self, Answer, Outcome};

/// HubSpot's API.
pub const API: &str = "https://api.hubapi.com";

/// The deal pipeline of a sync that names none: HubSpot's default pipeline's id.
pub const DEFAULT_PIPELINE: &str = "default";

/// The stage `lost` moves a deal of the default pipeline to when none is mapped: its
/// "Closed lost" (<https://knowledge.hubspot.com/object-settings/set-up-and-customize-pipelines>).
pub const DEFAULT_LOST_STAGE: &str = "closedlost";

/// The pipeline a sync's deals go to.
pub fn pipeline(options: &CrmOptions) -> &str {
    options.pipeline.as_deref().unwrap_or(DEFAULT_PIPELINE)
}

/// The stage a rating moves the lead's deal to: the one mapped to its label, else for
/// `lost` (`None`) in the default pipeline [`DEFAULT_LOST_STAGE`]; `None` for a rating
/// with no stage, which moves no deal.
pub fn stage<'a>(options: &'a CrmOptions, label: Option<&str>) -> Option<&'a str> {
    match options.stage(label) {
        None if label.is_none() && pipeline(options) == DEFAULT_PIPELINE => {
            Some(DEFAULT_LOST_STAGE)
        }
        mapped => mapped,
    }
}

/// The contact properties leadtrack makes and fills: name, label, and what it holds.
pub const PROPERTIES: [(&str, &str); 4] = [
    ("leadtrack_lead_id", "leadtrack lead id"),
    ("leadtrack_source", "leadtrack source"),
    ("leadtrack_campaign", "leadtrack campaign"),
    ("leadtrack_click_ids", "leadtrack click ids"),
];

/// A lead's contact properties: HubSpot's own for the person, and [`PROPERTIES`].
pub fn contact_properties(lead: &Lead) -> Map<String, Value> {
    let attribution = |name: &str| lead.attribution(name).map(str::to_owned);
    let clicks = lead.click_ids();
    let fields = [
        ("email", lead.email.clone()),
        ("firstname", lead.first_name.clone()),
        ("lastname", lead.last_name.clone()),
        ("phone", lead.phone.clone()),
        ("company", lead.company_name.clone()),
        ("leadtrack_lead_id", Some(lead.id.to_string())),
        ("leadtrack_source", attribution("utm_source")),
        ("leadtrack_campaign", attribution("utm_campaign")),
        (
            "leadtrack_click_ids",
            (!clicks.is_empty()).then(|| clicks.join(" ")),
        ),
    ];
    fields
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), Value::String(value?))))
        .collect()
}

/// A rating's deal properties: named after the lead, in `options`' pipeline at `stage`,
/// worth `price` cents of `currency` when there is a price.
pub fn deal_properties(
    lead: &Lead,
    options: &CrmOptions,
    stage: &str,
    (price, currency): (Option<i64>, &str),
) -> Map<String, Value> {
    let who = [&lead.first_name, &lead.last_name]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    let who = [who.as_str(), lead.email.as_deref().unwrap_or_default()]
        .into_iter()
        .find(|text| !text.is_empty())
        .unwrap_or("lead");
    let mut properties = Map::new();
    let name = format!("{who} (lead {})", lead.id);
    properties.insert("dealname".into(), Value::String(name));
    properties.insert("pipeline".into(), pipeline(options).into());
    properties.insert("dealstage".into(), stage.into());
    if let Some(cents) = price {
        let amount = format!("{}.{:02}", cents / 100, (cents % 100).abs());
        properties.insert("amount".into(), Value::String(amount));
        properties.insert("deal_currency_code".into(), currency.into());
    }
    properties
}

/// A deal pipeline and its stages, as the dashboard's picker offers them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Pipeline {
    /// Its id.
    pub id: String,
    /// Its name.
    pub label: String,
    /// Its stages, in order.
    pub stages: Vec<Stage>,
}

/// A stage of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Stage {
    /// Its id, which a deal's `dealstage` names.
    pub id: String,
    /// Its name.
    pub label: String,
}

/// A HubSpot account, as a private app's token reaches it.
pub struct Hubspot<'a> {
    /// The client, under the server's rule for addresses.
    pub http: &'a Outbound,
    /// HubSpot's API, or a server in its place.
    pub api: &'a str,
    /// The private app's access token.
    pub token: &'a Secret,
}

/// A batch endpoint leadtrack writes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// Contacts upserted by email.
    UpsertContacts,
    /// New contacts without an email.
    CreateContacts,
    /// Contacts without an email, known by their id.
    UpdateContacts,
    /// New deals, each associated with its contact.
    CreateDeals,
    /// Deals known by their id.
    UpdateDeals,
}

impl Endpoint {
    fn path(self) -> &'static str {
        match self {
            Self::UpsertContacts => "/crm/v3/objects/contacts/batch/upsert",
            Self::CreateContacts => "/crm/v3/objects/contacts/batch/create",
            Self::UpdateContacts => "/crm/v3/objects/contacts/batch/update",
            Self::CreateDeals => "/crm/v3/objects/deals/batch/create",
            Self::UpdateDeals => "/crm/v3/objects/deals/batch/update",
        }
    }
}

/// The most inputs one batch call takes.
pub const BATCH: usize = 100;

/// The requests a private app may make: 100 in any 10 seconds and 250,000 a day, the
/// limits of the smallest plans (Free and Starter; larger plans allow more), as requests,
/// the window in seconds, and requests a day
/// (<https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines>).
pub const QUOTA: (u32, u64, u32) = (100, 10, 250_000);

/// The contact with `properties`: an upsert by email when they hold one, else an update of
/// `known`, else a new contact.
pub fn contact_input(properties: Map<String, Value>, known: Option<&str>) -> (Endpoint, Value) {
    match (properties.get("email").cloned(), known) {
        (Some(email), _) => (
            Endpoint::UpsertContacts,
            json!({"idProperty": "email", "id": email, "properties": properties}),
        ),
        (None, Some(id)) => (
            Endpoint::UpdateContacts,
            json!({"id": id, "properties": properties}),
        ),
        (None, None) => (Endpoint::CreateContacts, json!({"properties": properties})),
    }
}

/// The deal with `properties`: `known` updated, or a new one associated with `contact`.
pub fn deal_input(
    properties: Map<String, Value>,
    known: Option<&str>,
    contact: &str,
) -> (Endpoint, Value) {
    match known {
        Some(id) => (
            Endpoint::UpdateDeals,
            json!({"id": id, "properties": properties}),
        ),
        None => {
            let association = json!({"to": {"id": contact}, "types": [
                {"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 3}
            ]});
            let input = json!({"properties": properties, "associations": [association]});
            (Endpoint::CreateDeals, input)
        }
    }
}

impl Hubspot<'_> {
    /// Writes `inputs` (1 to [`BATCH`], each with its own `trace` key) through `endpoint` in
    /// one call: for each input, in order, the id of its record or why it failed. Results
    /// are matched by `objectWriteTraceId`, which HubSpot echoes for each one; a batch with
    /// errors (`207`) fails the inputs it has no result for with them.
    pub async fn write(
        &self,
        endpoint: Endpoint,
        inputs: &[(String, Value)],
    ) -> Vec<Result<String, Outcome>> {
        let body: Vec<Value> = inputs
            .iter()
            .map(|(trace, input)| {
                let mut input = input.clone();
                input["objectWriteTraceId"] = Value::String(trace.clone());
                input
            })
            .collect();
        let answer = match self.post(endpoint.path(), json!({"inputs": body})).await {
            Ok(answer) => answer,
            Err(outcome) => return vec![Err(outcome); inputs.len()],
        };
        if !answer.is_success() {
            let outcome = answer.by_status(|| self.error(&answer));
            return vec![Err(outcome); inputs.len()];
        }
        let body: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
        let results = body["results"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let traced = |trace: &str| {
            results
                .iter()
                .find(|result| result["objectWriteTraceId"] == trace)
                .and_then(|result| result["id"].as_str())
        };
        inputs
            .iter()
            .enumerate()
            .map(|(at, (trace, _))| {
                // Without trace ids, HubSpot's results come in the inputs' order.
                let untraced = || match results.len() == inputs.len() {
                    true => results[at]["id"].as_str(),
                    false => None,
                };
                let id = traced(trace).or_else(untraced);
                id.map(str::to_owned).ok_or_else(|| Outcome::Failed {
                    status: Some(answer.status),
                    error: self.error(&answer),
                })
            })
            .collect()
    }

    /// Makes leadtrack's contact properties ([`PROPERTIES`]); those HubSpot has already
    /// are left as they are.
    pub async fn make_properties(&self) -> Result<(), Outcome> {
        let inputs: Vec<Value> = PROPERTIES
            .iter()
            .map(|(name, label)| {
                json!({"name": name, "label": label, "type": "string", "fieldType": "text",
                       "groupName": "contactinformation"})
            })
            .collect();
        let path = "/crm/v3/properties/contacts/batch/create";
        let answer = self.post(path, json!({"inputs": inputs})).await?;
        // 207 names the properties that exist already: what is wanted.
        match answer.status {
            200..=299 => Ok(()),
            _ => Err(answer.by_status(|| self.error(&answer))),
        }
    }

    /// The account's deal pipelines with their stages.
    pub async fn pipelines(&self) -> Result<Vec<Pipeline>, Outcome> {
        #[derive(Deserialize)]
        struct Pipelines {
            results: Vec<Pipeline>,
        }
        let url = outcome::endpoint(Some(self.api), API, "/crm/v3/pipelines/deals");
        let request = self
            .http
            .get(&url)
            .map(|r| r.bearer_auth(self.token.expose()));
        let answer = outcome::send(request).await?;
        if !answer.is_success() {
            return Err(answer.by_status(|| self.error(&answer)));
        }
        let read: Pipelines =
            serde_json::from_slice(&answer.body).map_err(|_| Outcome::Failed {
                status: Some(answer.status),
                error: format!(
                    "HubSpot's pipelines are not as documented: {}",
                    answer.snippet()
                ),
            })?;
        Ok(read.results)
    }

    async fn post(&self, path: &str, body: Value) -> Result<Answer, Outcome> {
        let url = outcome::endpoint(Some(self.api), API, path);
        let request = self.http.post(&url).map(|r| {
            r.bearer_auth(self.token.expose())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string())
        });
        outcome::send(request).await
    }

    /// What a failed answer says, without the token.
    fn error(&self, answer: &Answer) -> String {
        outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &[self.token.expose()],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lead(value: Value) -> Lead {
        let mut base = json!({
            "id": 7, "status": "open", "formName": null, "firstName": "Ada",
            "lastName": "Lovelace", "phone": null, "email": "ada@example.com",
            "companyName": "Engines", "price": null, "note": null, "formData": null,
            "userData": null, "attributionData": {"utm_source": "google",
            "utm_campaign": "spring", "gclid": "G1", "fbclid": "F1"},
            "channelFlow": null, "uniqueIdentifier": null,
            "createdAt": "2026-03-15T10:30:00.000Z", "conversionId": null
        });
        for (key, value) in value.as_object().unwrap() {
            base[key] = value.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_lead_is_a_contact_of_its_person_source_campaign_and_click_ids() {
        let properties = Value::Object(contact_properties(&lead(json!({}))));
        assert_eq!(
            properties,
            json!({"email": "ada@example.com", "firstname": "Ada", "lastname": "Lovelace",
                   "company": "Engines", "leadtrack_lead_id": "7",
                   "leadtrack_source": "google", "leadtrack_campaign": "spring",
                   "leadtrack_click_ids": "gclid=G1 fbclid=F1"})
        );
    }

    #[test]
    fn a_rating_is_a_deal_named_after_the_lead_with_its_amount() {
        let options = CrmOptions::new(Some("sales"), []).unwrap();
        let deal = deal_properties(&lead(json!({})), &options, "won", (Some(123_405), "EUR"));
        assert_eq!(
            Value::Object(deal),
            json!({"dealname": "Ada Lovelace (lead 7)", "pipeline": "sales",
                   "dealstage": "won", "amount": "1234.05", "deal_currency_code": "EUR"})
        );
        let nameless = lead(json!({"firstName": null, "lastName": null}));
        let deal = deal_properties(&nameless, &options, "lost", (None, "EUR"));
        assert_eq!(deal["dealname"], "ada@example.com (lead 7)");
        assert!(!deal.contains_key("amount"));
    }
}
