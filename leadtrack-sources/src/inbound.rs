//! Inbound webhooks: form tools posting their submissions to `/webhooks/inbound/{id}`
//! ([`leadtrack_core::inbound`]). A post is checked by its tool's signature (or the secret
//! in its URL), read into one JSON document, mapped to a lead, screened by the project's
//! spam rules and created as the keyed route creates. `/webhooks/inbound/{id}/test` does
//! all but the last step, and answers the lead it would create.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chrono::{DateTime, Utc};
use futures_util::stream;
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::inbound::{InboundHook, Preset, jotform_document};
use leadtrack_core::project::Project;
use leadtrack_core::spam::BotCheck;
use leadtrack_core::store::Entity;
use leadtrack_core::{Admin, ErrorCode, LeadStore, StoreError};
use leadtrack_http::{Body, Request};
use serde_json::{Map, Value, json};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;

use crate::store_error;

/// The largest post taken: Typeform sends the form's whole definition with each answer.
const BODY_LIMIT: usize = 1024 * 1024;

/// How far a Webflow signature's timestamp may be from now, either way, in milliseconds
/// (Webflow's guide rejects requests older than five minutes).
const WEBFLOW_TOLERANCE_MS: i64 = 5 * 60 * 1000;

/// `POST /webhooks/inbound/{id}`, and with `test` its `/test`: checked and mapped, and
/// not kept.
pub(crate) async fn post<S: LeadStore + Admin>(
    store: &S,
    request: &Request,
    (id, test): (&str, bool),
    body: Body,
) -> Response {
    let (hook, project) = match store.inbound_hook(id).await {
        Ok(found) => found,
        Err(StoreError::NotFound(Entity::Webhook)) => {
            return leadtrack_http::error(ErrorCode::NotFound, "No such inbound webhook");
        }
        Err(err) => return store_error(&err),
    };
    let bytes = match body.read(&request.headers, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(err) => return leadtrack_http::error(ErrorCode::PayloadTooLarge, err.to_string()),
    };
    if let Err(refusal) = verify(&hook, request, &bytes, Utc::now()) {
        tracing::warn!(hook = %hook.id, preset = %hook.preset, "an inbound post refused: {refusal}");
        return leadtrack_http::error(ErrorCode::InvalidApiKey, refusal);
    }
    let Some(document) = document(hook.preset, &request.headers, bytes).await else {
        return leadtrack_http::error(ErrorCode::InvalidJson, unreadable(hook.preset));
    };
    let mapped = hook.preset.map_post(&hook.mapping, &document);
    let lead = match mapped.lead() {
        Ok(lead) => lead,
        Err(err) => return leadtrack_http::error_body(err.into()),
    };
    if test {
        return leadtrack_http::json(StatusCode::OK, &json!({"lead": mapped.body}));
    }
    create(store, (&hook, &project), lead.data).await
}

/// Creates the lead in `project`, held as spam when the project's rules say it is.
async fn create<S: LeadStore>(
    store: &S,
    (hook, project): (&InboundHook, &Project),
    data: leadtrack_core::LeadData,
) -> Response {
    if !project.active {
        return leadtrack_http::error(ErrorCode::ProjectInactive, "The project is deactivated");
    }
    // The tools do not say who submitted: the rules about content apply, not those about
    // addresses or the capture script's checks.
    let spam = project
        .spam_rules
        .screen(data.submitted(), &BotCheck::default(), None);
    let route = leadtrack_core::request::CreateRoute::Server;
    match store
        .create_screened_lead(project.id, route, data, spam, Utc::now())
        .await
    {
        Ok(created) => {
            if created.created {
                leadtrack_http::metrics::lead_created("inbound", &project.public_id);
            }
            tracing::info!(project = %project.public_id, hook = %hook.id, preset = %hook.preset, lead = %created.lead_id, created = created.created, spam = spam.is_some(), "inbound lead kept");
            let answer = json!({"leadId": created.lead_id, "created": created.created});
            leadtrack_http::json(StatusCode::OK, &answer)
        }
        Err(err) => store_error(&err),
    }
}

/// Checks the post is the tool's: its signature by the hook's secret, or, for a tool that
/// does not sign, the secret in the URL. The refusal in words.
fn verify(
    hook: &InboundHook,
    request: &Request,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<(), &'static str> {
    let secret = hook.secret.expose().as_bytes();
    let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok());
    match hook.preset {
        // https://www.typeform.com/developers/webhooks/secure-your-webhooks/
        Preset::Typeform => {
            let signature = header("typeform-signature").ok_or("no Typeform-Signature")?;
            let digest = signature
                .strip_prefix("sha256=")
                .and_then(|text| BASE64.decode(text).ok())
                .ok_or("the Typeform-Signature is not sha256= and base64")?;
            check(secret, &[body], &digest).ok_or("the Typeform-Signature is not this webhook's")
        }
        // https://tally.so/help/webhooks: base64 of the HMAC-SHA256 of the payload.
        Preset::Tally => {
            let signature = header("tally-signature").ok_or("no Tally-Signature")?;
            let digest = BASE64
                .decode(signature)
                .map_err(|_| "the Tally-Signature is not base64")?;
            check(secret, &[body], &digest).ok_or("the Tally-Signature is not this webhook's")
        }
        // https://developers.webflow.com/data/docs/working-with-webhooks: webhooks made
        // through the API sign `timestamp:body`; those made in the site's settings do not
        // sign, and present the URL's secret instead.
        Preset::Webflow if header("x-webflow-signature").is_some() => {
            let timestamp = header("x-webflow-timestamp").ok_or("no x-webflow-timestamp")?;
            let signature = header("x-webflow-signature").unwrap_or_default();
            let sent: i64 = timestamp
                .parse()
                .map_err(|_| "the x-webflow-timestamp is not milliseconds")?;
            if (now.timestamp_millis() - sent).abs() > WEBFLOW_TOLERANCE_MS {
                return Err("the x-webflow-timestamp is more than five minutes off");
            }
            let digest =
                hex::decode(signature).map_err(|_| "the x-webflow-signature is not hex")?;
            let signed = [timestamp.as_bytes(), b":", body];
            check(secret, &signed, &digest).ok_or("the x-webflow-signature is not this webhook's")
        }
        Preset::Webflow | Preset::Jotform | Preset::Custom => {
            let given = request.param("secret").unwrap_or_default();
            bool::from(given.as_bytes().ct_eq(secret))
                .then_some(())
                .ok_or("the URL's secret is not this webhook's")
        }
    }
}

/// `Some` when `digest` is the HMAC-SHA256 of `parts` (joined) by `secret`, compared in
/// constant time.
fn check(secret: &[u8], parts: &[&[u8]], digest: &[u8]) -> Option<()> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).ok()?;
    for part in parts {
        mac.update(part);
    }
    mac.verify_slice(digest).ok()
}

/// The post as one JSON document: Jotform's multipart (or form-encoded) fields with its
/// `rawRequest` read; for the others, JSON, or a form-encoded body as an object of
/// strings.
async fn document(preset: Preset, headers: &HeaderMap, bytes: bytes::Bytes) -> Option<Value> {
    let fields = match boundary(headers) {
        Some(boundary) => multipart_fields(bytes, boundary).await?,
        None if is_form(headers) => form_urlencoded::parse(&bytes).into_owned().collect(),
        None if preset == Preset::Jotform => return None,
        None => {
            return serde_json::from_slice::<Value>(&bytes)
                .ok()
                .filter(Value::is_object);
        }
    };
    match preset {
        Preset::Jotform => jotform_document(
            fields
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str())),
        ),
        _ => {
            let object: Map<String, Value> = fields
                .into_iter()
                .map(|(name, value)| (name, Value::String(value)))
                .collect();
            Some(Value::Object(object))
        }
    }
}

/// The boundary of a `multipart/form-data` body.
fn boundary(headers: &HeaderMap) -> Option<String> {
    let content_type = headers.get("content-type")?.to_str().ok()?;
    multer::parse_boundary(content_type).ok()
}

/// Whether the body is `application/x-www-form-urlencoded`.
fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
}

/// The text fields of a multipart body, in order; `None` when it is not multipart.
async fn multipart_fields(bytes: bytes::Bytes, boundary: String) -> Option<Vec<(String, String)>> {
    let body = stream::once(async move { Ok::<_, std::convert::Infallible>(bytes) });
    let mut multipart = multer::Multipart::new(body, boundary);
    let mut fields = Vec::new();
    while let Some(field) = multipart.next_field().await.ok()? {
        let name = field.name().unwrap_or_default().to_owned();
        fields.push((name, field.text().await.ok()?));
    }
    Some(fields)
}

/// What a post a tool could not have sent is told.
fn unreadable(preset: Preset) -> &'static str {
    match preset {
        Preset::Jotform => "The body is not Jotform's post: it needs a rawRequest field of JSON",
        _ => "The body is not a JSON object",
    }
}
