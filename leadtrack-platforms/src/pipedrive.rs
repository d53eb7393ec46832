//! Pipedrive's API, with a user's API token (the `x-api-token` header,
//! <https://pipedrive.readme.io/docs/core-api-concepts-authentication>): a lead as a person
//! and a lead of Pipedrive's Leads Inbox, its rating as a deal.
//!
//! - The person is found by email, then by phone, exactly
//!   (`GET /api/v2/persons/search?term=…&fields=email&exact_match=true`), else made
//!   (`POST /api/v2/persons`, <https://developers.pipedrive.com/docs/api/v1/Persons>), so a
//!   person's leads share one person.
//! - A new lead is a Pipedrive lead linked to the person (`POST /v1/leads`,
//!   <https://developers.pipedrive.com/docs/api/v1/Leads>), with a note of where it came
//!   from: source, medium, campaign, click ids and leadtrack's id (`POST /v1/notes` with
//!   `lead_id`, <https://developers.pipedrive.com/docs/api/v1/Notes>).
//! - A rating makes the lead's one deal for the person (`POST /api/v2/deals`), in the
//!   pipeline and stage chosen, with the value and currency, and archives the Pipedrive lead
//!   it came from (`PATCH /v1/leads/{id}`, `is_archived`): the lead moves out of the Leads
//!   Inbox as a conversion would move it. A rating again moves the same deal
//!   (`PATCH /api/v2/deals/{id}`, <https://developers.pipedrive.com/docs/api/v1/Deals>);
//!   `lost` marks it lost (`status: "lost"`).
//! - Pipelines and stages: `GET /api/v2/pipelines`, `GET /api/v2/stages?pipeline_id=`
//!   (<https://developers.pipedrive.com/docs/api/v1/Pipelines>,
//!   <https://developers.pipedrive.com/docs/api/v1/Stages>).
//! - Pipedrive limits requests per token (<https://pipedrive.readme.io/docs/core-api-concepts-rate-limiting>):
//!   a `429` is retried after its `Retry-After`, or the worker's backoff.

use leadtrack_core::api::Lead;
use leadtrack_core::integration::Secret;
use leadtrack_outbound::Outbound;
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::outcome::{self, Answer, Outcome};

/// Pipedrive's API.
pub const API: &str = "https://api.pipedrive.com";

/// The note a new Pipedrive lead gets: where the lead came from.
pub fn note(lead: &Lead) -> String {
    let attribution = |name: &str| lead.attribution(name).map(str::to_owned);
    let mut lines = vec![format!("From leadtrack, lead {}.", lead.id)];
    let fields = [
        ("Form", lead.form_name.clone()),
        ("Source", attribution("utm_source")),
        ("Medium", attribution("utm_medium")),
        ("Campaign", attribution("utm_campaign")),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            lines.push(format!("{name}: {value}"));
        }
    }
    let clicks = lead.click_ids();
    if !clicks.is_empty() {
        lines.push(format!("Click ids: {}", clicks.join(" ")));
    }
    lines
        .iter()
        .map(|line| format!("<p>{}</p>", escape(line)))
        .collect()
}

/// `text` for an HTML note.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A lead's name for Pipedrive: its person's name, else email, else phone.
pub fn title(lead: &Lead) -> String {
    let name = [&lead.first_name, &lead.last_name]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    [
        Some(name.as_str()),
        lead.email.as_deref(),
        lead.phone.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find(|text| !text.is_empty())
    .unwrap_or("Lead")
    .to_owned()
}

/// A deal pipeline, with its stages once read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Pipeline {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its place among the pipelines: the first is Pipedrive's default.
    #[serde(default)]
    pub order_nr: i64,
}

/// A stage of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Stage {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
}

/// What a rating makes of the lead's deal.
pub struct DealChange<'a> {
    /// The deal's title.
    pub title: &'a str,
    /// The pipeline's id.
    pub pipeline: i64,
    /// The stage's id, when the rating maps to one (`lost` may keep the deal's).
    pub stage: Option<i64>,
    /// The value in cents, and its currency.
    pub value: (Option<i64>, &'a str),
    /// Whether the rating is `lost`.
    pub lost: bool,
}

/// A Pipedrive account, as an API token reaches it.
pub struct Pipedrive<'a> {
    /// The client, under the server's rule for addresses.
    pub http: &'a Outbound,
    /// Pipedrive's API, or a server in its place.
    pub api: &'a str,
    /// The API token.
    pub token: &'a Secret,
}

impl Pipedrive<'_> {
    /// The person of `lead`: found by its email, then its phone, else made. Its id.
    pub async fn person(&self, lead: &Lead) -> Result<String, Outcome> {
        let keys = [("email", &lead.email), ("phone", &lead.phone)];
        for (field, value) in keys {
            let Some(value) = value else { continue };
            let query = [
                ("term", value.as_str()),
                ("fields", field),
                ("exact_match", "true"),
            ];
            let found = self
                .call(Method::GET, "/api/v2/persons/search", &query, None)
                .await?;
            if let Some(id) = found["items"][0]["item"]["id"].as_i64() {
                return Ok(id.to_string());
            }
        }
        let contact = |value: &Option<String>| match value {
            Some(value) => json!([{"value": value, "primary": true, "label": "work"}]),
            None => json!([]),
        };
        let body = json!({"name": title(lead), "emails": contact(&lead.email), "phones": contact(&lead.phone)});
        let made = self
            .call(Method::POST, "/api/v2/persons", &[], Some(body))
            .await?;
        id_of(&made)
    }

    /// A new Pipedrive lead titled `title`, linked to `person`: its id.
    pub async fn create_lead(&self, title: &str, person: &str) -> Result<String, Outcome> {
        let body = json!({"title": title, "person_id": number(person)});
        id_of(
            &self
                .call(Method::POST, "/v1/leads", &[], Some(body))
                .await?,
        )
    }

    /// Adds `note` to Pipedrive lead `lead`.
    pub async fn add_note(&self, lead: &str, note: &str) -> Result<(), Outcome> {
        let body = json!({"content": note, "lead_id": lead});
        self.call(Method::POST, "/v1/notes", &[], Some(body))
            .await?;
        Ok(())
    }

    /// Archives Pipedrive lead `lead`: it leaves the Leads Inbox.
    pub async fn archive_lead(&self, lead: &str) -> Result<(), Outcome> {
        let body = json!({"is_archived": true});
        let path = format!("/v1/leads/{lead}");
        self.call(Method::PATCH, &path, &[], Some(body)).await?;
        Ok(())
    }

    /// A new deal of `person` as `change` says: its id.
    pub async fn create_deal(
        &self,
        change: &DealChange<'_>,
        person: &str,
    ) -> Result<String, Outcome> {
        let mut body = deal_body(change);
        body["person_id"] = json!(number(person));
        id_of(
            &self
                .call(Method::POST, "/api/v2/deals", &[], Some(body))
                .await?,
        )
    }

    /// Moves deal `id` as `change` says.
    pub async fn update_deal(&self, id: &str, change: &DealChange<'_>) -> Result<(), Outcome> {
        let path = format!("/api/v2/deals/{id}");
        self.call(Method::PATCH, &path, &[], Some(deal_body(change)))
            .await?;
        Ok(())
    }

    /// The account's pipelines, first the default.
    pub async fn pipelines(&self) -> Result<Vec<Pipeline>, Outcome> {
        let data = self
            .call(Method::GET, "/api/v2/pipelines", &[], None)
            .await?;
        let mut pipelines: Vec<Pipeline> = read(data)?;
        pipelines.sort_by_key(|p| p.order_nr);
        Ok(pipelines)
    }

    /// The stages of pipeline `id`, in order.
    pub async fn stages(&self, pipeline: i64) -> Result<Vec<Stage>, Outcome> {
        let id = pipeline.to_string();
        let query = [("pipeline_id", id.as_str())];
        let data = self
            .call(Method::GET, "/api/v2/stages", &query, None)
            .await?;
        read(data)
    }

    /// Calls `path` and reads the `data` of Pipedrive's answer, `{"success": true, "data"}`.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Value, Outcome> {
        let url = outcome::endpoint(Some(self.api), API, path);
        let request = self.http.request(method, &url).map(|r| {
            let r = r.header("x-api-token", self.token.expose()).query(query);
            match &body {
                Some(body) => r
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.to_string()),
                None => r,
            }
        });
        let answer = outcome::send(request).await?;
        let read: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
        if answer.is_success() && read["success"] == true {
            return Ok(read["data"].clone());
        }
        Err(answer.by_status(|| self.error(&answer)))
    }

    /// What a failed answer says, without the token.
    fn error(&self, answer: &Answer) -> String {
        outcome::scrub(
            format!("HTTP {}: {}", answer.status, answer.snippet()),
            &[self.token.expose()],
        )
    }
}

/// A deal's fields as `change` sets them.
fn deal_body(change: &DealChange<'_>) -> Value {
    let mut body = json!({
        "title": change.title,
        "pipeline_id": change.pipeline,
        "status": if change.lost { "lost" } else { "open" },
    });
    if let Some(stage) = change.stage {
        body["stage_id"] = json!(stage);
    }
    if let (Some(cents), currency) = change.value {
        // Pipedrive's value is a number in the currency's units.
        body["value"] = json!(cents as f64 / 100.0);
        body["currency"] = json!(currency);
    }
    body
}

/// A Pipedrive id kept as text, as the number its API takes.
fn number(id: &str) -> i64 {
    id.parse().unwrap_or_default()
}

/// The id an answer's `data` holds (a number, or a lead's UUID).
fn id_of(data: &Value) -> Result<String, Outcome> {
    match &data["id"] {
        Value::Number(id) => Ok(id.to_string()),
        Value::String(id) => Ok(id.clone()),
        _ => Err(Outcome::Failed {
            status: None,
            error: format!("Pipedrive's answer has no id: {data}"),
        }),
    }
}

/// `data` as a list of `T`, or a failure saying the answer is not as documented.
fn read<T: serde::de::DeserializeOwned>(data: Value) -> Result<Vec<T>, Outcome> {
    serde_json::from_value(data).map_err(|err| Outcome::Failed {
        status: None,
        error: format!("Pipedrive's answer is not as documented: {err}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lead_is_titled_after_its_person_and_noted_with_where_it_came_from() {
        let lead: Lead = serde_json::from_value(json!({
            "id": 7, "status": "open", "formName": "Contact <main>", "firstName": null,
            "lastName": null, "phone": "+49 151 1", "email": null, "companyName": null,
            "price": null, "note": null, "formData": null, "userData": null,
            "attributionData": {"utm_source": "google", "utm_campaign": "spring", "gclid": "G1"},
            "channelFlow": null, "uniqueIdentifier": null,
            "createdAt": "2026-03-15T10:30:00.000Z", "conversionId": null
        }))
        .unwrap();
        assert_eq!(title(&lead), "+49 151 1");
        assert_eq!(
            note(&lead),
            "<p>From leadtrack, lead 7.</p><p>Form: Contact &lt;main&gt;</p>\
             <p>Source: google</p><p>Campaign: spring</p><p>Click ids: gclid=G1</p>"
        );
    }
}
