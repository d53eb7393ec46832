//! A stand-in for HubSpot's CRM API ([`MockHubspot`]) that keeps contacts and deals as
//! HubSpot does and checks the documented requests:
//!
//! - every call carries the private app's token as `Authorization: Bearer` (else `401`);
//! - batch calls hold 1 to 100 `inputs`
//!   (<https://developers.hubspot.com/docs/guides/api/crm/objects/contacts>, "Batch create
//!   or update": up to 100 records), none naming a record twice, else `400`; a bad input
//!   refuses the whole batch, and results come back with each input's `objectWriteTraceId`
//!   (<https://developers.hubspot.com/docs/api-reference/legacy/crm/objects/contacts/batch/upsert-contacts>)
//!   in no promised order (here reversed);
//! - an email HubSpot cannot read (here: without `@`) is `INVALID_EMAIL`;
//! - a contact upsert names `idProperty: "email"` and its `id` is the contact's email
//!   (<https://developers.hubspot.com/docs/api-reference/crm-contacts-v3/batch/upsert-contacts>):
//!   one contact per email, created once and updated after;
//! - a contact is created only with an email, a first name or a last name, and an update
//!   names a contact that exists;
//! - every property written exists: HubSpot's own or one made through the properties API
//!   (`PROPERTY_DOESNT_EXIST` otherwise, <https://developers.hubspot.com/docs/guides/api/crm/properties>);
//! - a deal names a pipeline and a stage of it, and is created associated with an existing
//!   contact by association type 3, deal to contact
//!   (<https://developers.hubspot.com/docs/guides/api/crm/associations/associations-v4>);
//! - past its budget of requests (set by [`MockHubspot::throttle`]) it answers `429` with
//!   `Retry-After` and HubSpot's rate-limit body
//!   (<https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines>).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use warp::Filter;
use warp::http::StatusCode;
use warp::reply::{Reply, Response};

/// The token [`MockHubspot`] takes.
pub const HUBSPOT_TOKEN: &str = "pat-na1-mock-token";

/// HubSpot's own contact properties leadtrack writes.
const CONTACT_PROPERTIES: [&str; 5] = ["email", "firstname", "lastname", "phone", "company"];
/// HubSpot's own deal properties leadtrack writes.
const DEAL_PROPERTIES: [&str; 5] = [
    "dealname",
    "pipeline",
    "dealstage",
    "amount",
    "deal_currency_code",
];

/// A pipeline of the mock account: id, label and stages (id, label).
pub type MockPipeline = (
    &'static str,
    &'static str,
    [(&'static str, &'static str); 3],
);

/// The mock account's pipelines.
pub const PIPELINES: [MockPipeline; 2] = [
    (
        "default",
        "Sales Pipeline",
        [
            ("appointmentscheduled", "Appointment scheduled"),
            ("closedwon", "Closed won"),
            ("closedlost", "Closed lost"),
        ],
    ),
    (
        "77001",
        "Partners",
        [("77010", "Intro"), ("77011", "Signed"), ("77012", "Lost")],
    ),
];

/// A deal as the mock keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MockDeal {
    /// Its properties, as last written.
    pub properties: Map<String, Value>,
    /// The contact it is associated with.
    pub contact: String,
    /// How many writes made it what it is: 1 for a deal created and never moved.
    pub writes: usize,
}

#[derive(Clone, Default)]
struct Account {
    contacts: BTreeMap<String, Map<String, Value>>,
    deals: BTreeMap<String, MockDeal>,
    custom_properties: Vec<String>,
    next_id: u64,
    throttled: usize,
    calls: Vec<String>,
    batches: Vec<(String, usize)>,
}

/// HubSpot, as [the module](self) says.
pub struct MockHubspot {
    url: String,
    account: Arc<Mutex<Account>>,
    _stop: oneshot::Sender<()>,
}

impl MockHubspot {
    /// Starts the mock on a free loopback port, with no contact and no deal.
    pub async fn start() -> Self {
        let account = Arc::new(Mutex::new(Account {
            next_id: 100,
            ..Account::default()
        }));
        let kept = Arc::clone(&account);
        let routes = warp::method()
            .and(warp::path::full())
            .and(warp::header::optional::<String>("authorization"))
            .and(warp::body::bytes())
            .map(
                move |method: warp::http::Method,
                      path: warp::path::FullPath,
                      auth: Option<String>,
                      body: bytes::Bytes| {
                    let mut account = kept.lock().unwrap_or_else(|e| e.into_inner());
                    account.calls.push(format!("{method} {}", path.as_str()));
                    answer(
                        &mut account,
                        (method.as_str(), path.as_str()),
                        auth.as_deref(),
                        &body,
                    )
                },
            );
        let (url, stop) = super::serve(routes).await;
        Self {
            url,
            account,
            _stop: stop,
        }
    }

    /// The mock's address, as the sync's `--base-url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Answers the next `requests` with `429`.
    pub fn throttle(&self, requests: usize) {
        self.lock().throttled = requests;
    }

    /// The contacts, by id.
    pub fn contacts(&self) -> BTreeMap<String, Map<String, Value>> {
        self.lock().contacts.clone()
    }

    /// The deals, by id.
    pub fn deals(&self) -> BTreeMap<String, MockDeal> {
        self.lock().deals.clone()
    }

    /// The contact properties made through the properties API.
    pub fn custom_properties(&self) -> Vec<String> {
        self.lock().custom_properties.clone()
    }

    /// Every call, `METHOD /path`, in order.
    pub fn calls(&self) -> Vec<String> {
        self.lock().calls.clone()
    }

    /// Every batch call answered `200`: its path and how many inputs it held, in order.
    pub fn batches(&self) -> Vec<(String, usize)> {
        self.lock().batches.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Account> {
        self.account.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn hubspot_error(status: StatusCode, category: &str, message: &str) -> Response {
    let body = json!({"status": "error", "message": message, "category": category,
                      "correlationId": "mock"});
    warp::reply::with_status(warp::reply::json(&body), status).into_response()
}

fn answer(account: &mut Account, call: (&str, &str), auth: Option<&str>, body: &[u8]) -> Response {
    if auth != Some(&format!("Bearer {HUBSPOT_TOKEN}")) {
        return hubspot_error(
            StatusCode::UNAUTHORIZED,
            "INVALID_AUTHENTICATION",
            "Authentication credentials not found.",
        );
    }
    if account.throttled > 0 {
        account.throttled -= 1;
        let body = json!({"status": "error", "message": "You have reached your secondly limit.",
                          "errorType": "RATE_LIMIT", "correlationId": "mock", "policyName": "SECONDLY"});
        let reply =
            warp::reply::with_status(warp::reply::json(&body), StatusCode::TOO_MANY_REQUESTS);
        return warp::reply::with_header(reply, "Retry-After", "1").into_response();
    }
    if call == ("GET", "/crm/v3/pipelines/deals") {
        return warp::reply::json(&pipelines()).into_response();
    }
    let inputs = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|b| b["inputs"].as_array().cloned());
    let Some(inputs) = inputs.filter(|i| (1..=100).contains(&i.len())) else {
        return hubspot_error(
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "inputs must hold 1 to 100 records",
        );
    };
    if let Err(message) = distinct_ids(&inputs) {
        return hubspot_error(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", &message);
    }
    // A batch is written whole or not at all: a bad input refuses it all.
    let mut draft = account.clone();
    let results: Result<Vec<Value>, String> = inputs
        .iter()
        .map(|input| {
            let mut result = write(&mut draft, call, input)?;
            result["objectWriteTraceId"] = input["objectWriteTraceId"].clone();
            Ok(result)
        })
        .collect();
    match results {
        Ok(mut results) => {
            *account = draft;
            account.batches.push((call.1.to_owned(), inputs.len()));
            // HubSpot does not promise its results in the inputs' order.
            results.reverse();
            warp::reply::json(&json!({"status": "COMPLETE", "results": results})).into_response()
        }
        Err(message) if message == "NOT_FOUND" => hubspot_error(
            StatusCode::NOT_FOUND,
            "OBJECT_NOT_FOUND",
            "no such endpoint",
        ),
        Err(message) => hubspot_error(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", &message),
    }
}

/// One input of a batch call to `call`, written to `account`.
fn write(account: &mut Account, call: (&str, &str), input: &Value) -> Result<Value, String> {
    match call {
        ("POST", "/crm/v3/properties/contacts/batch/create") => make_property(account, input),
        ("POST", "/crm/v3/objects/contacts/batch/upsert") => upsert_contact(account, input),
        ("POST", "/crm/v3/objects/contacts/batch/create") => write_contact(account, None, input),
        ("POST", "/crm/v3/objects/contacts/batch/update") => {
            write_contact(account, input["id"].as_str(), input)
        }
        ("POST", "/crm/v3/objects/deals/batch/create") => write_deal(account, None, input),
        ("POST", "/crm/v3/objects/deals/batch/update") => {
            write_deal(account, input["id"].as_str(), input)
        }
        _ => Err("NOT_FOUND".to_owned()),
    }
}

/// HubSpot refuses a batch naming one record twice ("Duplicate IDs found in batch input").
fn distinct_ids(inputs: &[Value]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    let ids = inputs.iter().filter_map(|input| input["id"].as_str());
    match ids.map(str::to_lowercase).all(|id| seen.insert(id)) {
        true => Ok(()),
        false => Err("Duplicate IDs found in batch input".to_owned()),
    }
}

fn pipelines() -> Value {
    let results: Vec<Value> = PIPELINES
        .iter()
        .map(|(id, label, stages)| {
            let stages: Vec<Value> = stages
                .iter()
                .enumerate()
                .map(|(order, (id, label))| json!({"id": id, "label": label, "displayOrder": order,
                    "metadata": {"isClosed": "false", "probability": "0.2"}, "archived": false}))
                .collect();
            json!({"id": id, "label": label, "displayOrder": 0, "archived": false, "stages": stages})
        })
        .collect();
    json!({"results": results})
}

fn make_property(account: &mut Account, input: &Value) -> Result<Value, String> {
    let name = input["name"].as_str().ok_or("a property needs a name")?;
    for field in ["label", "type", "fieldType", "groupName"] {
        if !input[field].is_string() {
            return Err(format!("property {name}: {field} is required"));
        }
    }
    if !account.custom_properties.iter().any(|p| p == name) {
        account.custom_properties.push(name.to_owned());
    }
    Ok(input.clone())
}

/// The input's properties, each one HubSpot's own (`own`) or made through the API.
fn properties(
    account: &Account,
    input: &Value,
    own: &[&str],
) -> Result<Map<String, Value>, String> {
    let properties = input["properties"]
        .as_object()
        .cloned()
        .ok_or("properties are required")?;
    for (name, value) in &properties {
        if !own.contains(&name.as_str()) && !account.custom_properties.contains(name) {
            return Err(format!(
                "PROPERTY_DOESNT_EXIST: Property \"{name}\" does not exist"
            ));
        }
        if !value.is_string() {
            return Err(format!("property {name}: values are strings"));
        }
    }
    Ok(properties)
}

fn upsert_contact(account: &mut Account, input: &Value) -> Result<Value, String> {
    if input["idProperty"] != "email" {
        return Err("contacts are upserted by idProperty email".to_owned());
    }
    let properties = properties(account, input, &CONTACT_PROPERTIES)?;
    let email = input["id"]
        .as_str()
        .ok_or("id is the contact's email")?
        .to_lowercase();
    if !email.contains('@') {
        return Err(format!(
            "Property values were not valid: INVALID_EMAIL {email:?}"
        ));
    }
    if properties
        .get("email")
        .and_then(Value::as_str)
        .map(str::to_lowercase)
        != Some(email.clone())
    {
        return Err("the email property differs from the id".to_owned());
    }
    let found = account.contacts.iter().find(|(_, c)| {
        c.get("email")
            .and_then(Value::as_str)
            .map(str::to_lowercase)
            == Some(email.clone())
    });
    let id = found.map(|(id, _)| id.clone());
    write_contact(account, id.as_deref(), input)
}

fn write_contact(account: &mut Account, id: Option<&str>, input: &Value) -> Result<Value, String> {
    let written = properties(account, input, &CONTACT_PROPERTIES)?;
    let id = match id {
        Some(id) if input["idProperty"].is_null() && !account.contacts.contains_key(id) => {
            return Err(format!("contact {id} does not exist"));
        }
        Some(id) => id.to_owned(),
        None if ["email", "firstname", "lastname"]
            .iter()
            .all(|p| !written.contains_key(*p)) =>
        {
            return Err("a contact needs an email, a first name or a last name".to_owned());
        }
        None => {
            account.next_id += 1;
            account.next_id.to_string()
        }
    };
    let contact = account.contacts.entry(id.clone()).or_default();
    contact.extend(written);
    Ok(json!({"id": id, "properties": contact, "archived": false}))
}

fn write_deal(account: &mut Account, id: Option<&str>, input: &Value) -> Result<Value, String> {
    let written = properties(account, input, &DEAL_PROPERTIES)?;
    let mut deal = match id {
        Some(id) => account
            .deals
            .get(id)
            .cloned()
            .ok_or(format!("deal {id} does not exist"))?,
        None => {
            let association = &input["associations"][0];
            let contact = association["to"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let types = &association["types"][0];
            if types["associationCategory"] != "HUBSPOT_DEFINED" || types["associationTypeId"] != 3
            {
                return Err("a deal is associated with its contact by type 3".to_owned());
            }
            if !account.contacts.contains_key(&contact) {
                return Err(format!("contact {contact} does not exist"));
            }
            if !written.contains_key("dealname") {
                return Err("dealname is required".to_owned());
            }
            MockDeal {
                properties: Map::new(),
                contact,
                writes: 0,
            }
        }
    };
    deal.properties.extend(written);
    deal.writes += 1;
    let property = |name: &str| {
        deal.properties
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (pipeline, stage) = (property("pipeline"), property("dealstage"));
    let known = PIPELINES
        .iter()
        .any(|(p, _, stages)| *p == pipeline && stages.iter().any(|(s, _)| *s == stage));
    if !known {
        return Err(format!("{stage:?} is not a stage of pipeline {pipeline:?}"));
    }
    let id = id.map_or_else(
        || {
            account.next_id += 1;
            account.next_id.to_string()
        },
        str::to_owned,
    );
    let answer = json!({"id": id, "properties": deal.properties, "archived": false});
    account.deals.insert(id, deal);
    Ok(answer)
}

/// The token [`MockPipedrive`] takes.
pub const PIPEDRIVE_TOKEN: &str = "pipedrive-mock-token";

/// A pipeline of the Pipedrive mock: id, name, order and stages (id, name).
pub type MockPipedrivePipeline = (i64, &'static str, i64, [(i64, &'static str); 3]);

/// The Pipedrive mock's pipelines.
pub const PIPEDRIVE_PIPELINES: [MockPipedrivePipeline; 2] = [
    (
        1,
        "Sales",
        0,
        [(1, "Qualified"), (2, "Proposal made"), (3, "Negotiation")],
    ),
    (2, "Partners", 1, [(4, "Intro"), (5, "Signed"), (6, "Live")]),
];

/// A record the Pipedrive mock keeps: its fields as last written, and how many writes.
#[derive(Clone, Debug, PartialEq)]
pub struct MockRecord {
    /// Its fields.
    pub fields: Map<String, Value>,
    /// Writes that made it what it is: 1 for one never changed.
    pub writes: usize,
}

#[derive(Default)]
struct PipedriveAccount {
    persons: BTreeMap<i64, MockRecord>,
    leads: BTreeMap<String, MockRecord>,
    notes: Vec<(String, String)>,
    deals: BTreeMap<i64, MockRecord>,
    next_id: i64,
    throttled: usize,
    calls: Vec<String>,
}

/// A stand-in for Pipedrive's API that keeps persons, leads, notes and deals and checks
/// the documented requests:
///
/// - every call carries the API token in `x-api-token`
///   (<https://pipedrive.readme.io/docs/core-api-concepts-authentication>), else `401`;
/// - a person search names `term`, `fields` (`email` or `phone`) and `exact_match=true`
///   (<https://developers.pipedrive.com/docs/api/v1/Persons#searchPersons>);
/// - a person needs a `name`, its `emails` and `phones` lists of `{value, primary, label}`;
/// - a lead needs a `title` and an existing `person_id` (<https://developers.pipedrive.com/docs/api/v1/Leads#addLead>);
///   a note names an existing `lead_id` and has `content`;
/// - a deal needs a `title`, an existing `person_id`, a pipeline and a stage of it, and a
///   `status` of `open`, `won` or `lost` (<https://developers.pipedrive.com/docs/api/v1/Deals#addDeal>);
/// - past its budget (set by [`MockPipedrive::throttle`]) it answers `429` with `Retry-After`.
pub struct MockPipedrive {
    url: String,
    account: Arc<Mutex<PipedriveAccount>>,
    _stop: oneshot::Sender<()>,
}

impl MockPipedrive {
    /// Starts the mock on a free loopback port, with nothing in it.
    pub async fn start() -> Self {
        let account = Arc::new(Mutex::new(PipedriveAccount {
            next_id: 500,
            ..PipedriveAccount::default()
        }));
        let kept = Arc::clone(&account);
        let routes = warp::method()
            .and(warp::path::full())
            .and(warp::query::<BTreeMap<String, String>>())
            .and(warp::header::optional::<String>("x-api-token"))
            .and(warp::body::bytes())
            .map(
                move |method: warp::http::Method,
                      path: warp::path::FullPath,
                      query: BTreeMap<String, String>,
                      token: Option<String>,
                      body: bytes::Bytes| {
                    let mut account = kept.lock().unwrap_or_else(|e| e.into_inner());
                    account.calls.push(format!("{method} {}", path.as_str()));
                    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    pipedrive_answer(
                        &mut account,
                        (method.as_str(), path.as_str()),
                        (&query, token.as_deref()),
                        &body,
                    )
                },
            );
        let (url, stop) = super::serve(routes).await;
        Self {
            url,
            account,
            _stop: stop,
        }
    }

    /// The mock's address, as the sync's `--base-url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Answers the next `requests` with `429`.
    pub fn throttle(&self, requests: usize) {
        self.lock().throttled = requests;
    }

    /// The persons, by id.
    pub fn persons(&self) -> BTreeMap<i64, MockRecord> {
        self.lock().persons.clone()
    }

    /// The leads, by id.
    pub fn leads(&self) -> BTreeMap<String, MockRecord> {
        self.lock().leads.clone()
    }

    /// The notes: the lead's id and the content.
    pub fn notes(&self) -> Vec<(String, String)> {
        self.lock().notes.clone()
    }

    /// The deals, by id.
    pub fn deals(&self) -> BTreeMap<i64, MockRecord> {
        self.lock().deals.clone()
    }

    /// Every call, `METHOD /path`, in order.
    pub fn calls(&self) -> Vec<String> {
        self.lock().calls.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PipedriveAccount> {
        self.account.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn pipedrive_error(status: StatusCode, error: &str) -> Response {
    let body = json!({"success": false, "error": error, "code": status.as_u16()});
    warp::reply::with_status(warp::reply::json(&body), status).into_response()
}

fn pipedrive_answer(
    account: &mut PipedriveAccount,
    call: (&str, &str),
    (query, token): (&BTreeMap<String, String>, Option<&str>),
    body: &Value,
) -> Response {
    if token != Some(PIPEDRIVE_TOKEN) {
        return pipedrive_error(StatusCode::UNAUTHORIZED, "unauthorized access");
    }
    if account.throttled > 0 {
        account.throttled -= 1;
        let reply = pipedrive_error(StatusCode::TOO_MANY_REQUESTS, "Request over limit");
        return warp::reply::with_header(reply, "Retry-After", "1").into_response();
    }
    let data = match call {
        ("GET", "/api/v2/pipelines") => Ok(json!(PIPEDRIVE_PIPELINES
            .iter()
            .map(|(id, name, order, _)| json!({"id": id, "name": name, "order_nr": order, "is_deleted": false}))
            .collect::<Vec<_>>())),
        ("GET", "/api/v2/stages") => stages(query),
        ("GET", "/api/v2/persons/search") => search_persons(account, query),
        ("POST", "/api/v2/persons") => add_person(account, body),
        ("POST", "/v1/leads") => add_lead(account, body),
        ("POST", "/v1/notes") => add_note(account, body),
        ("POST", "/api/v2/deals") => write_pipedrive_deal(account, None, body),
        ("PATCH", path) if path.starts_with("/api/v2/deals/") => {
            let id = path.trim_start_matches("/api/v2/deals/").parse().unwrap_or_default();
            write_pipedrive_deal(account, Some(id), body)
        }
        ("PATCH", path) if path.starts_with("/v1/leads/") => {
            let id = path.trim_start_matches("/v1/leads/");
            match account.leads.get_mut(id) {
                Some(lead) if body["is_archived"].is_boolean() => {
                    lead.fields.insert("is_archived".into(), body["is_archived"].clone());
                    lead.writes += 1;
                    Ok(json!({"id": id}))
                }
                _ => Err((StatusCode::NOT_FOUND, format!("lead {id} not found"))),
            }
        }
        _ => Err((StatusCode::NOT_FOUND, "no such endpoint".to_owned())),
    };
    match data {
        Ok(data) => warp::reply::json(&json!({"success": true, "data": data})).into_response(),
        Err((status, error)) => pipedrive_error(status, &error),
    }
}

type Answered = Result<Value, (StatusCode, String)>;

fn bad(error: impl Into<String>) -> (StatusCode, String) {
    (StatusCode::BAD_REQUEST, error.into())
}

fn stages(query: &BTreeMap<String, String>) -> Answered {
    let pipeline: i64 = query
        .get("pipeline_id")
        .and_then(|id| id.parse().ok())
        .ok_or(bad("pipeline_id is required"))?;
    let (_, _, _, stages) = PIPEDRIVE_PIPELINES
        .iter()
        .find(|(id, ..)| *id == pipeline)
        .ok_or(bad("no such pipeline"))?;
    Ok(json!(stages.iter().enumerate().map(|(order, (id, name))| json!({"id": id, "name": name, "order_nr": order, "pipeline_id": pipeline})).collect::<Vec<_>>()))
}

fn search_persons(account: &PipedriveAccount, query: &BTreeMap<String, String>) -> Answered {
    let field = query.get("fields").map(String::as_str);
    let (Some(term), Some("email" | "phone"), Some("true")) = (
        query.get("term"),
        field,
        query.get("exact_match").map(String::as_str),
    ) else {
        return Err(bad(
            "term, fields (email or phone) and exact_match=true are expected",
        ));
    };
    let list = if field == Some("email") {
        "emails"
    } else {
        "phones"
    };
    let items: Vec<Value> = account
        .persons
        .iter()
        .filter(|(_, p)| p.fields[list].as_array().is_some_and(|values| values.iter().any(|v| v["value"].as_str().is_some_and(|v| v.eq_ignore_ascii_case(term)))))
        .map(|(id, p)| json!({"result_score": 1.0, "item": {"id": id, "type": "person", "name": p.fields["name"]}}))
        .collect();
    Ok(json!({"items": items}))
}

fn add_person(account: &mut PipedriveAccount, body: &Value) -> Answered {
    if body["name"].as_str().is_none_or(str::is_empty) {
        return Err(bad("name is required"));
    }
    for list in ["emails", "phones"] {
        let ok = body[list].as_array().is_some_and(|values| {
            values.iter().all(|v| {
                v["value"].is_string() && v["primary"].is_boolean() && v["label"].is_string()
            })
        });
        if !ok {
            return Err(bad(format!(
                "{list} is a list of {{value, primary, label}}"
            )));
        }
    }
    account.next_id += 1;
    let id = account.next_id;
    let fields = body.as_object().cloned().unwrap_or_default();
    account.persons.insert(id, MockRecord { fields, writes: 1 });
    Ok(json!({"id": id, "name": body["name"]}))
}

fn add_lead(account: &mut PipedriveAccount, body: &Value) -> Answered {
    let person = body["person_id"]
        .as_i64()
        .filter(|id| account.persons.contains_key(id));
    if body["title"].as_str().is_none_or(str::is_empty) || person.is_none() {
        return Err(bad("title and an existing person_id are required"));
    }
    account.next_id += 1;
    let id = format!("adf21080-0e10-11eb-879b-{:012}", account.next_id);
    let fields = body.as_object().cloned().unwrap_or_default();
    account
        .leads
        .insert(id.clone(), MockRecord { fields, writes: 1 });
    Ok(json!({"id": id, "title": body["title"], "person_id": person, "source_name": "API"}))
}

fn add_note(account: &mut PipedriveAccount, body: &Value) -> Answered {
    let lead = body["lead_id"]
        .as_str()
        .filter(|id| account.leads.contains_key(*id));
    match (lead, body["content"].as_str()) {
        (Some(lead), Some(content)) => {
            account.notes.push((lead.to_owned(), content.to_owned()));
            account.next_id += 1;
            Ok(json!({"id": account.next_id}))
        }
        _ => Err(bad("content and an existing lead_id are required")),
    }
}

fn write_pipedrive_deal(account: &mut PipedriveAccount, id: Option<i64>, body: &Value) -> Answered {
    let mut deal = match id {
        Some(id) => account
            .deals
            .get(&id)
            .cloned()
            .ok_or((StatusCode::NOT_FOUND, format!("deal {id} not found")))?,
        None => {
            let person = body["person_id"]
                .as_i64()
                .filter(|id| account.persons.contains_key(id));
            if body["title"].as_str().is_none_or(str::is_empty) || person.is_none() {
                return Err(bad("title and an existing person_id are required"));
            }
            MockRecord {
                fields: Map::new(),
                writes: 0,
            }
        }
    };
    deal.fields
        .extend(body.as_object().cloned().unwrap_or_default());
    deal.writes += 1;
    let (pipeline, stage) = (
        deal.fields["pipeline_id"].as_i64(),
        deal.fields.get("stage_id").and_then(Value::as_i64),
    );
    let known = PIPEDRIVE_PIPELINES.iter().any(|(p, _, _, stages)| {
        Some(*p) == pipeline && stages.iter().any(|(s, _)| Some(*s) == stage)
    });
    if !known {
        return Err(bad(format!(
            "stage {stage:?} is not of pipeline {pipeline:?}"
        )));
    }
    if !matches!(
        deal.fields["status"].as_str(),
        Some("open" | "won" | "lost")
    ) {
        return Err(bad("status is open, won or lost"));
    }
    let id = id.unwrap_or_else(|| {
        account.next_id += 1;
        account.next_id
    });
    account.deals.insert(id, deal);
    Ok(json!({"id": id}))
}
