//! TikTok, through the Events API 2.0, as CRM events.
//!
//! `POST {base}/open_api/v1.3/event/track/` with the `Access-Token` header and a body that
//! names the CRM event set (`event_source: "crm"`, `event_source_id`: the set's id) and
//! carries the events in `data`, as TikTok's guide to posting back CRM events says
//! (<https://ads.tiktok.com/help/article/how-to-postback-signals-through-events-api>, step
//! 3). Each event has its name (a stage of the advertiser's funnel, which they map to a
//! standard event in Events Manager), `event_time` in Unix seconds, the `event_id` TikTok
//! deduplicates by, the person's identifiers in `user` (email, phone and external id
//! SHA-256 hashed; the click id `ttclid` and the cookie id `ttp` as they are) and the value
//! in `properties` (the Events API's parameters,
//! <https://business-api.tiktok.com/portal/docs?id=1771100865818625>). A
//! `test_event_code` at the top level sends events to Events Manager's Test events tab
//! instead.
//!
//! TikTok answers HTTP 200 with a JSON body whose `code` is 0 when it took the events;
//! any other code is an error it names in `message`. Its codes for too many requests and
//! for its own failures (5xxxx) are retried; the others are permanent.
//!
//! This module holds the request and how its answer reads; a job's delivery is
//! `leadtrack-forward`'s.

use chrono::Duration;
use leadtrack_core::integration::TiktokSettings;
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://business-api.tiktok.com";

/// The most events one request carries in `data`: 1,000, by the Events API's parameters
/// (<https://business-api.tiktok.com/portal/docs?id=1771100865818625>).
pub const BATCH_SIZE: usize = 1_000;

/// The path of the Events API's endpoint.
pub const TRACK_PATH: &str = "/open_api/v1.3/event/track/";

/// TikTok's codes for "too many requests": the request may be sent again later.
const THROTTLED_CODES: [i64; 2] = [40100, 42900];

/// How old an event TikTok's offline and CRM events take: 28 days, its longest
/// click-through attribution window; older events are not matched to ads.
pub fn max_event_age() -> Duration {
    Duration::days(28)
}

/// The request's body: the CRM event set's `events`, with the settings' test event code.
pub fn body(settings: &TiktokSettings, events: Vec<Value>) -> Value {
    let mut body = json!({
        "event_source": "crm",
        "event_source_id": settings.event_set_id,
        "data": events,
    });
    if let Some(code) = settings.test_event_code.as_deref() {
        body["test_event_code"] = json!(code);
    }
    body
}

/// Posts `body` to the Events API with the settings' token.
pub async fn post(
    http: &Outbound,
    settings: &TiktokSettings,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, TRACK_PATH);
    let request = http.post(&url).map(|request| {
        request
            .header("Access-Token", settings.access_token.expose())
            .json(body)
    });
    outcome::send(request).await
}

/// The envelope of every TikTok answer.
#[derive(Deserialize)]
struct Envelope {
    code: i64,
    #[serde(default)]
    message: String,
}

/// Reads TikTok's answer: delivered when its `code` is 0; a code that asks to slow down,
/// or one of TikTok's own failures, is retried; any other is a permanent failure.
pub fn classify(answer: &Answer, settings: &TiktokSettings) -> Outcome {
    let secrets = [settings.access_token.expose()];
    let Ok(Envelope { code, message }) = serde_json::from_slice::<Envelope>(&answer.body) else {
        return match answer.is_success() {
            true => Outcome::Failed {
                status: Some(answer.status),
                error: format!(
                    "TikTok answered something else than its JSON: {}",
                    answer.snippet()
                ),
            },
            false => answer.by_status(|| {
                outcome::scrub(
                    format!("HTTP {}: {}", answer.status, answer.snippet()),
                    &secrets,
                )
            }),
        };
    };
    if code == 0 && answer.is_success() {
        return Outcome::Delivered {
            status: answer.status,
        };
    }
    let error = outcome::scrub(
        outcome::short(&format!("TikTok error {code}: {message}")),
        &secrets,
    );
    let transient = THROTTLED_CODES.contains(&code)
        || (50000..60000).contains(&code)
        || outcome::is_retryable_status(answer.status);
    if transient {
        Outcome::Retry {
            status: Some(answer.status),
            error,
            retry_after: answer.retry_after,
        }
    } else {
        Outcome::Failed {
            status: Some(answer.status),
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leadtrack_core::integration::Secret;

    fn settings() -> TiktokSettings {
        TiktokSettings {
            event_set_id: "7312345678901234567".into(),
            access_token: Secret::new("tt-secret-token"),
            test_event_code: None,
            base_url: None,
        }
    }

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            retry_after: None,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_body_names_the_crm_event_set_and_its_test_code() {
        let plain = body(&settings(), vec![json!({"event": "Qualified"})]);
        assert_eq!(
            plain,
            json!({
                "event_source": "crm",
                "event_source_id": "7312345678901234567",
                "data": [{"event": "Qualified"}],
            })
        );
        let testing = TiktokSettings {
            test_event_code: Some("TEST123".into()),
            ..settings()
        };
        assert_eq!(body(&testing, vec![])["test_event_code"], "TEST123");
    }

    #[test]
    fn code_zero_is_delivered_and_other_codes_retry_or_fail() {
        let ok = r#"{"code":0,"message":"OK","request_id":"r","data":{}}"#;
        assert_eq!(
            classify(&answer(200, ok), &settings()),
            Outcome::Delivered { status: 200 }
        );
        for code in [40100, 42900, 50000, 51001] {
            let body = format!(r#"{{"code":{code},"message":"later"}}"#);
            assert!(
                matches!(
                    classify(&answer(200, &body), &settings()),
                    Outcome::Retry { .. }
                ),
                "{code}"
            );
        }
        let bad = r#"{"code":40002,"message":"Invalid access token tt-secret-token"}"#;
        assert_eq!(
            classify(&answer(200, bad), &settings()),
            Outcome::Failed {
                status: Some(200),
                error: "TikTok error 40002: Invalid access token ***".into(),
            }
        );
    }

    #[test]
    fn an_answer_without_its_envelope_reads_by_status() {
        assert!(matches!(
            classify(&answer(503, "busy"), &settings()),
            Outcome::Retry { .. }
        ));
        assert!(matches!(
            classify(&answer(200, "<html>"), &settings()),
            Outcome::Failed { .. }
        ));
    }
}
