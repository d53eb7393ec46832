//! Form tools' inbound webhooks over real sockets, on SQLite (or PostgreSQL with
//! `LEADTRACK_TEST_BACKEND=postgres`): each tool's sample post from its documentation,
//! signed as the tool signs it, kept once however often it arrives; a forged or stale
//! signature, a wrong URL secret or an unknown webhook refused with nothing kept; a test
//! post answering the lead it would make, keeping nothing; and the project's spam rules
//! applied.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::inbound::{INBOUND_PATH, InboundHook, Preset};
use leadtrack_core::integration::Secret;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::types::{LeadIdentifier, LeadStatus};
use leadtrack_server::testkit::{Parts, TestApp, spawn_app};
use serde_json::{Value, json};
use sha2::Sha256;

const SECRET: &str = "inbound-secret-known-to-the-test";

/// An app, and a webhook of `preset` in its project with [`SECRET`].
async fn app(preset: Preset) -> (TestApp, InboundHook) {
    let app = spawn_app(Parts {
        project: "site",
        ..Parts::default()
    })
    .await;
    let hook = InboundHook::new(app.project.id, ("", preset), Some(Secret::new(SECRET)));
    app.store.save_inbound_hook(&hook).await.unwrap();
    (app, hook)
}

/// The HMAC-SHA256 of `parts` by `secret`.
fn hmac(secret: &str, parts: &[&[u8]]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().to_vec()
}

/// Posts `body` with `headers` to the webhook's URL path plus `suffix`; the status and
/// the body.
async fn post(
    app: &TestApp,
    path: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", app.base_url))
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// How many leads the project has, spam included.
async fn leads(app: &TestApp) -> u64 {
    let query = LeadQuery {
        status: Some(<LeadStatus as strum::VariantArray>::VARIANTS.to_vec()),
        ..LeadQuery::default()
    };
    app.store
        .list_leads(app.project.id, &query)
        .await
        .unwrap()
        .total
}

/// The project's lead with `email`.
async fn lead(app: &TestApp, email: &str) -> leadtrack_core::StoredLead {
    let email = LeadIdentifier::Email(email.to_owned());
    app.store.find_lead(app.project.id, &email).await.unwrap()
}

/// Typeform's example payload, as its documentation gives it
/// (<https://www.typeform.com/developers/webhooks/example-payload/>; the fields'
/// definitions shortened to the two the answers name).
fn typeform_sample() -> Value {
    json!({
        "event_id": "LtWXD3crgy",
        "event_type": "form_response",
        "form_response": {
            "form_id": "lT4Z3j",
            "token": "a3a12ec67a1365927098a606107fac15",
            "submitted_at": "2018-01-18T18:17:02Z",
            "landed_at": "2018-01-18T18:07:02Z",
            "calculated": {"score": 9},
            "variables": [
                {"key": "score", "type": "number", "number": 4},
                {"key": "name", "type": "text", "text": "typeform"}
            ],
            "hidden": {"user_id": "abc123456"},
            "definition": {
                "id": "lT4Z3j",
                "title": "Webhooks example",
                "fields": [
                    {"id": "SMEUb7VJz92Q", "title": "If you're OK with our city management following up if they have further questions, please give us your email address.", "type": "email", "ref": "readable_ref_email", "allow_multiple_selections": false, "allow_other_choice": false},
                    {"id": "JwWggjAKtOkA", "title": "What is your first name?", "type": "short_text", "ref": "readable_ref_short_text", "allow_multiple_selections": false, "allow_other_choice": false}
                ]
            },
            "answers": [
                {"type": "email", "email": "laura@example.com", "field": {"id": "SMEUb7VJz92Q", "type": "email"}},
                {"type": "text", "text": "Laura", "field": {"id": "JwWggjAKtOkA", "type": "short_text"}},
                {"type": "date", "date": "2005-10-15", "field": {"id": "KoJxDM3c6x8h", "type": "date"}},
                {"type": "choices", "choices": {"labels": ["London", "Sydney"]}, "field": {"id": "PNe8ZKBK8C2Q", "type": "picture_choice"}},
                {"type": "boolean", "boolean": true, "field": {"id": "gFFf3xAkJKsr", "type": "legal"}},
                {"type": "choice", "choice": {"label": "London"}, "field": {"id": "k6TP9oLGgHjl", "type": "multiple_choice"}},
                {"type": "url", "url": "https://calendly.com/scheduled_events/EVENT_TYPE/invitees/INVITEE", "field": {"id": "M5tXK5kG7IeA", "type": "calendly", "ref": "readable_ref_calendly"}}
            ]
        }
    })
}

/// Typeform's signature: `sha256=` and the base64 HMAC-SHA256 of the body
/// (<https://www.typeform.com/developers/webhooks/secure-your-webhooks/>).
fn typeform_signature(secret: &str, body: &[u8]) -> (&'static str, String) {
    let digest = BASE64.encode(hmac(secret, &[body]));
    ("typeform-signature", format!("sha256={digest}"))
}

#[tokio::test]
async fn a_typeform_response_becomes_one_lead_and_a_forged_one_nothing() {
    let (app, hook) = app(Preset::Typeform).await;
    let body = serde_json::to_vec(&typeform_sample()).unwrap();
    let path = hook.path();

    let forged = [typeform_signature("another-secret", &body)];
    let (status, answer) = post(&app, &path, &forged, body.clone()).await;
    assert_eq!(status, 401, "{answer}");
    assert_eq!(answer["code"], "invalid_api_key");
    let (status, _) = post(&app, &path, &[], body.clone()).await;
    assert_eq!(status, 401);
    assert_eq!(leads(&app).await, 0);

    let signed = [typeform_signature(SECRET, &body)];
    let (status, answer) = post(&app, &path, &signed, body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["created"], true);
    // Typeform delivers again until it hears a 2xx: the same response is the same lead.
    let (status, again) = post(&app, &path, &signed, body.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(again, json!({"leadId": answer["leadId"], "created": false}));
    assert_eq!(leads(&app).await, 1);

    let lead = lead(&app, "laura@example.com").await;
    assert_eq!(lead.data.user_data["firstName"], "Laura");
    assert_eq!(lead.data.form_data["formName"], "Webhooks example");
    assert_eq!(
        lead.data.form_data["uniqueEventId"],
        "a3a12ec67a1365927098a606107fac15"
    );
    assert_eq!(lead.data.form_data["inbound"], typeform_sample());
    assert_eq!(lead.status, LeadStatus::Open);
}

/// Tally's example `FORM_RESPONSE` payload (<https://tally.so/help/webhooks>), its
/// fields of the kinds a lead form has (the documentation's copies obfuscate the email
/// address: one of ours stands in).
fn tally_sample() -> Value {
    json!({
        "eventId": "a4cb511e-d513-4fa5-baee-b815d718dfd1",
        "eventType": "FORM_RESPONSE",
        "createdAt": "2023-06-28T15:00:21.889Z",
        "data": {
            "responseId": "2wgx4n",
            "submissionId": "2wgx4n",
            "respondentId": "dwQKYm",
            "formId": "VwbNEw",
            "formName": "Webhook payload",
            "createdAt": "2023-06-28T15:00:21.000Z",
            "fields": [
                {"key": "question_mVGEg3_8b5711e3-f6a2-4e25-9e68-5d730598c681", "label": "utm_campaign", "type": "HIDDEN_FIELDS", "value": "newsletter"},
                {"key": "question_nPpjVn_84b69d73-0a85-4577-89f4-8632632cc222", "label": "Score", "type": "CALCULATED_FIELDS", "value": 20},
                {"key": "question_3EKz4n", "label": "Text", "type": "INPUT_TEXT", "value": "Hello"},
                {"key": "question_nr5yNw", "label": "Number", "type": "INPUT_NUMBER", "value": 10},
                {"key": "question_w4Q4Xn", "label": "Email", "type": "INPUT_EMAIL", "value": "alice@example.com"},
                {"key": "question_3jZaa3", "label": "Phone number", "type": "INPUT_PHONE_NUMBER", "value": "+32491223344"},
                {"key": "question_w2XEjm", "label": "Website", "type": "INPUT_LINK", "value": "example.com"},
                {"key": "question_3Nrpl3", "label": "Long text", "type": "TEXTAREA", "value": "Hello world"}
            ]
        }
    })
}

#[tokio::test]
async fn a_tally_response_is_kept_when_signed_by_the_secret() {
    let (app, hook) = app(Preset::Tally).await;
    let body = serde_json::to_vec(&tally_sample()).unwrap();
    let forged = [("tally-signature", BASE64.encode(hmac("other", &[&body])))];
    let (status, _) = post(&app, &hook.path(), &forged, body.clone()).await;
    assert_eq!(status, 401);
    assert_eq!(leads(&app).await, 0);

    // Tally signs with the base64 HMAC-SHA256 of the payload.
    let signed = [("tally-signature", BASE64.encode(hmac(SECRET, &[&body])))];
    let (status, answer) = post(&app, &hook.path(), &signed, body).await;
    assert_eq!(status, 200, "{answer}");
    let lead = lead(&app, "alice@example.com").await;
    assert_eq!(lead.data.user_data["firstName"], "Hello");
    assert_eq!(lead.data.user_data["phone"], "+32491223344");
    assert_eq!(lead.data.form_data["formMessage"], "Hello world");
    assert_eq!(lead.data.form_data["formName"], "Webhook payload");
    assert_eq!(lead.data.form_data["uniqueEventId"], "2wgx4n");
    assert_eq!(lead.data.attribution_data["utm_campaign"], "newsletter");
}

/// Webflow's `form_submission` example
/// (<https://developers.webflow.com/data/reference/webhooks/events/form-submission>).
fn webflow_sample() -> Value {
    json!({
        "triggerType": "form_submission",
        "payload": {
            "name": "Contact Us",
            "siteId": "65427cf400e02b306eaa049c",
            "data": {
                "First Name": "Zaphod",
                "Last Name": "Beeblebrox",
                "email": "zaphod@heartofgold.ai",
                "Phone Number": 15550000000_i64
            },
            "schema": [
                {"fieldName": "First Name", "fieldType": "FormTextInput", "fieldElementId": "285042f7-d554-dc7f-102c-aa10d6a2d2c4"},
                {"fieldName": "Last Name", "fieldType": "FormTextInput", "fieldElementId": "285042f7-d554-dc7f-102c-aa10d6a2d2c5"},
                {"fieldName": "email", "fieldType": "FormTextInput", "fieldElementId": "285042f7-d554-dc7f-102c-aa10d6a2d2c6"},
                {"fieldName": "Phone Number", "fieldType": "FormTextInput", "fieldElementId": "285042f7-d554-dc7f-102c-aa10d6a2d2c7"}
            ],
            "submittedAt": "2022-09-14T12:35:16.117Z",
            "id": "6321ca84df3949bfc6752327",
            "formId": "65429eadebe8a9f3a30f62d0",
            "formElementId": "4e038d2c-6a1e-4953-7be9-a59a2b453177"
        }
    })
}

#[tokio::test]
async fn a_webflow_submission_needs_a_fresh_signature_or_the_url_secret() {
    let (app, hook) = app(Preset::Webflow).await;
    let body = serde_json::to_vec(&webflow_sample()).unwrap();
    let signed_at = |age_ms: i64| {
        let timestamp = (chrono::Utc::now().timestamp_millis() - age_ms).to_string();
        // Webflow signs `timestamp:body` with HMAC-SHA256, hex.
        let signature = hex::encode(hmac(SECRET, &[timestamp.as_bytes(), b":", &body]));
        [
            ("x-webflow-timestamp", timestamp),
            ("x-webflow-signature", signature),
        ]
    };
    let stale = signed_at(10 * 60 * 1000);
    let (status, answer) = post(&app, &hook.path(), &stale, body.clone()).await;
    assert_eq!(status, 401, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("five minutes"));
    assert_eq!(leads(&app).await, 0);

    // Signed: the URL's secret is not needed.
    let bare = format!("{INBOUND_PATH}{}", hook.id);
    let (status, answer) = post(&app, &bare, &signed_at(0), body.clone()).await;
    assert_eq!(status, 200, "{answer}");
    // A webhook made in the site's settings does not sign: the URL's secret stands in.
    let (status, _) = post(&app, &bare, &[], body.clone()).await;
    assert_eq!(status, 401);
    let (status, again) = post(&app, &hook.path(), &[], body).await;
    assert_eq!(status, 200);
    assert_eq!(again, json!({"leadId": answer["leadId"], "created": false}));
    let lead = lead(&app, "zaphod@heartofgold.ai").await;
    assert_eq!(lead.data.user_data["firstName"], "Zaphod");
    assert_eq!(lead.data.user_data["lastName"], "Beeblebrox");
    assert_eq!(lead.data.user_data["phone"], "15550000000");
    assert_eq!(lead.data.form_data["formName"], "Contact Us");
    assert_eq!(
        lead.data.form_data["uniqueEventId"],
        "6321ca84df3949bfc6752327"
    );
}

/// A multipart body of `fields`, as Jotform posts
/// (<https://www.jotform.com/help/449-how-to-send-submissions-to-your-own-server/>): text
/// parts, the answers as JSON in `rawRequest`.
fn multipart(fields: &[(&str, &str)]) -> (String, Vec<u8>) {
    let boundary = "------------------------jotform7b1c";
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    (
        format!("multipart/form-data; boundary={boundary}"),
        body.into_bytes(),
    )
}

#[tokio::test]
async fn a_jotform_submission_is_read_from_its_raw_request_with_the_url_secret() {
    let (app, hook) = app(Preset::Jotform).await;
    // A captured submission's shape: slashes escaped, answers under `q{id}_{name}`, with a
    // company field and a hidden gclid added.
    let raw = r#"{"slug":"submit\/221144600480140\/","q28_name":{"first":"John","last":"Smith"},"q32_email":"john@example.com","q34_phoneNumber":{"full":"(555) 555-1234"},"q35_company":"Acme","q36_gclid":"jot-gclid","event_id":"1650897326645_221144600480140_aGu8qm7","path":"\/submit\/221144600480140"}"#;
    let (content_type, body) = multipart(&[
        ("formID", "221144600480140"),
        ("type", "WEB"),
        ("formTitle", "Contact Form"),
        ("submissionID", "5267074469613966508"),
        ("rawRequest", raw),
        ("pretty", "Name:John Smith, E-mail:john@example.com"),
        ("ip", "203.0.113.7"),
    ]);
    let headers = [("content-type", content_type)];
    let wrong = format!("{INBOUND_PATH}{}?secret=guess", hook.id);
    let (status, _) = post(&app, &wrong, &headers, body.clone()).await;
    assert_eq!(status, 401);
    let (status, answer) = post(&app, &hook.path(), &headers, body).await;
    assert_eq!(status, 200, "{answer}");
    let lead = lead(&app, "john@example.com").await;
    assert_eq!(lead.data.user_data["firstName"], "John");
    assert_eq!(lead.data.user_data["lastName"], "Smith");
    assert_eq!(lead.data.user_data["phone"], "(555) 555-1234");
    assert_eq!(lead.data.user_data["companyName"], "Acme");
    assert_eq!(lead.data.form_data["formName"], "Contact Form");
    assert_eq!(lead.data.form_data["uniqueEventId"], "5267074469613966508");
    assert_eq!(lead.data.attribution_data["gclid"], "jot-gclid");

    let (content_type, body) = multipart(&[("formID", "1")]);
    let (status, answer) = post(&app, &hook.path(), &[("content-type", content_type)], body).await;
    assert_eq!(status, 400);
    assert_eq!(answer["code"], "invalid_json");
}

#[tokio::test]
async fn a_test_post_answers_the_lead_and_keeps_nothing() {
    let (app, hook) = app(Preset::Custom).await;
    let body =
        br#"{"contact": {"email": "test@example.com", "firstName": "Tess"}, "gclid": "g-1"}"#;
    let path = format!("{INBOUND_PATH}{}/test?secret={SECRET}", hook.id);
    let (status, answer) = post(&app, &path, &[], body.to_vec()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["lead"]["userData"],
        json!({"email": "test@example.com", "firstName": "Tess"})
    );
    assert_eq!(answer["lead"]["attributionData"], json!({"gclid": "g-1"}));
    assert_eq!(leads(&app).await, 0);

    // Nothing to make a lead of: the contract's own refusal.
    let (status, answer) = post(&app, &path, &[], br#"{"note": "hi"}"#.to_vec()).await;
    assert_eq!(status, 400);
    assert_eq!(answer["code"], "no_lead_data");
    let unknown = "/webhooks/inbound/0123456789abcdef0123456789abcdef";
    let (status, answer) = post(&app, unknown, &[], body.to_vec()).await;
    assert_eq!((status, answer["code"].as_str()), (404, Some("not_found")));
}

#[tokio::test]
async fn a_post_the_spam_rules_catch_is_kept_as_spam() {
    let (app, hook) = app(Preset::Custom).await;
    let body = br#"{"email": "someone@mailinator.com", "firstName": "Spam"}"#.to_vec();
    let (status, answer) = post(&app, &hook.path(), &[], body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        lead(&app, "someone@mailinator.com").await.status,
        LeadStatus::Spam
    );
}
