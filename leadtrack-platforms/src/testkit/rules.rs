//! Mock platforms that check each platform's documented request rules, for the batched
//! deliveries' tests and benchmark: each answers as its platform does, refuses what breaks
//! a rule the way the platform refuses it, and keeps the event ids it accepted.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{MockPlatform, MockResponse, Recorded};
use crate::normalize::sha256_hex;

/// The email whose events the mocks refuse, standing for any event a platform finds
/// invalid.
pub const REFUSED: &str = "refused@example.com";

/// The event ids a mock accepted, in the order its requests came.
pub type Accepted = Arc<Mutex<Vec<String>>>;

/// Keeps the ids (`key`) of the `events` a mock accepted.
fn accept(kept: &Accepted, events: &[Value], key: &str) {
    let ids = events
        .iter()
        .map(|e| e[key].as_str().unwrap_or_default().to_owned());
    kept.lock().unwrap().extend(ids);
}

fn is_sha256(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Meta's Conversions API rules: at most 1,000 events in `data`
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/using-the-api#send>);
/// each with `event_name`, `event_time`, `action_source` and the `event_id` Meta
/// deduplicates by, and `em`/`ph` as SHA-256 hashes
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters>).
/// One invalid event refuses the whole request with Graph error 100.
pub fn meta(mock: &MockPlatform) -> Accepted {
    let accepted = Accepted::default();
    let kept = Arc::clone(&accepted);
    mock.check(Arc::new(move |request: &Recorded| {
        let refuse = |message: &str| {
            MockResponse::json(
                400,
                json!({"error": {"message": message, "type": "OAuthException", "code": 100,
                                 "error_subcode": 2804019, "fbtrace_id": "trace"}}),
            )
        };
        let body = request.json();
        let Some(events) = body["data"].as_array() else {
            return Some(refuse("data must be an array"));
        };
        if events.is_empty() || events.len() > 1_000 {
            return Some(refuse("data holds 1 to 1,000 events"));
        }
        for event in events {
            let complete = event["event_name"].is_string()
                && event["event_time"].is_i64()
                && event["action_source"].is_string()
                && event["event_id"].is_string();
            let hashed = ["em", "ph"].iter().all(|key| {
                event["user_data"][key]
                    .as_array()
                    .is_none_or(|hashes| hashes.iter().all(is_sha256))
            });
            if !complete || !hashed {
                return Some(refuse("Invalid parameter"));
            }
            if event["user_data"]["em"][0] == json!(sha256_hex(REFUSED)) {
                return Some(refuse("Invalid parameter: an event's user data is refused"));
            }
        }
        accept(&kept, events, "event_id");
        Some(MockResponse::json(
            200,
            json!({"events_received": events.len(), "messages": [], "fbtrace_id": "trace"}),
        ))
    }));
    accepted
}

/// The Data Manager API's `events:ingest` rules: 1 to 2,000 events and 1 to 10
/// destinations a request (<https://developers.google.com/data-manager/api/limits>); each
/// event with its `transactionId`, `eventTimestamp`, and click ids or user data, email
/// hashed in `HEX` encoding
/// (<https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest>). One
/// invalid event refuses the whole request with `INVALID_ARGUMENT`. After `quota` requests
/// the quota is spent: every request is refused with `RESOURCE_EXHAUSTED` and `429`, as the
/// limits page says, with a `Retry-After` of a second.
pub fn data_manager(mock: &MockPlatform, quota: usize) -> Accepted {
    let accepted = Accepted::default();
    let kept = Arc::clone(&accepted);
    let requests = Arc::new(Mutex::new(0));
    mock.check(Arc::new(move |request: &Recorded| {
        let refuse = |status: u16, code: &str, message: &str| {
            MockResponse::json(
                status,
                json!({"error": {"code": status, "status": code, "message": message}}),
            )
        };
        let mut made = requests.lock().unwrap();
        *made += 1;
        if *made > quota {
            return Some(
                refuse(429, "RESOURCE_EXHAUSTED", "Quota exceeded").with_header("retry-after", "1"),
            );
        }
        let body = request.json();
        let events = body["events"].as_array().cloned().unwrap_or_default();
        let destinations = body["destinations"].as_array().map_or(0, Vec::len);
        if events.is_empty() || events.len() > 2_000 || !(1..=10).contains(&destinations) {
            return Some(refuse(
                400,
                "INVALID_ARGUMENT",
                "events or destinations out of bounds",
            ));
        }
        for event in &events {
            let identified = event["adIdentifiers"]
                .as_object()
                .is_some_and(|ids| !ids.is_empty())
                || event["userData"].is_object();
            let hashed = event["userData"]["userIdentifiers"]
                .as_array()
                .is_none_or(|ids| {
                    ids.len() <= 10
                        && ids.iter().all(|id| {
                            id["emailAddress"].is_null() || is_sha256(&id["emailAddress"])
                        })
                });
            if !event["transactionId"].is_string()
                || !event["eventTimestamp"].is_string()
                || !identified
                || !hashed
                || body["encoding"] != "HEX"
            {
                return Some(refuse(400, "INVALID_ARGUMENT", "Invalid event"));
            }
            let email = &event["userData"]["userIdentifiers"][0]["emailAddress"];
            if *email == json!(sha256_hex(REFUSED)) {
                return Some(refuse(
                    400,
                    "INVALID_ARGUMENT",
                    "An event's user data is refused",
                ));
            }
        }
        accept(&kept, &events, "transactionId");
        Some(MockResponse::json(200, json!({"requestId": "req"})))
    }));
    accepted
}

/// The Events API's rules for CRM events: `event_source` `crm` with the event set's
/// `event_source_id`, 1 to 1,000 events in `data`, each with its `event`, `event_time` in
/// seconds and the `event_id` TikTok deduplicates by, email and phone as SHA-256 hashes
/// (<https://business-api.tiktok.com/portal/docs?id=1771100865818625>). TikTok answers
/// every request with one `code`: an invalid event refuses the whole request, with HTTP
/// `200` and the parameter error `40002`.
pub fn tiktok(mock: &MockPlatform) -> Accepted {
    let accepted = Accepted::default();
    let kept = Arc::clone(&accepted);
    mock.check(Arc::new(move |request: &Recorded| {
        let refuse = |message: &str| {
            MockResponse::json(
                200,
                json!({"code": 40002, "message": message, "request_id": "req", "data": {}}),
            )
        };
        let body = request.json();
        let events = body["data"].as_array().cloned().unwrap_or_default();
        if body["event_source"] != "crm"
            || !body["event_source_id"].is_string()
            || events.is_empty()
            || events.len() > 1_000
        {
            return Some(refuse("event_source, event_source_id or data is invalid"));
        }
        for event in &events {
            let complete = event["event"].is_string()
                && event["event_time"].is_i64()
                && event["event_id"].is_string();
            let hashed = ["email", "phone"]
                .iter()
                .all(|key| event["user"][key].is_null() || is_sha256(&event["user"][key]));
            if !complete || !hashed {
                return Some(refuse("Invalid event"));
            }
            if event["user"]["email"] == json!(sha256_hex(REFUSED)) {
                return Some(refuse("Invalid value for user.email"));
            }
        }
        accept(&kept, &events, "event_id");
        Some(MockResponse::json(
            200,
            json!({"code": 0, "message": "OK", "request_id": "req", "data": {}}),
        ))
    }));
    accepted
}
