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
//! `leadtrack-forward`'s. Here too: the spend reader ([`spend`]).

use chrono::{Days, Duration, NaiveDate};
use leadtrack_core::integration::TiktokSettings;
use leadtrack_core::spend::{SpendPlatform, SpendRow};
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

/// The longest range of days one report by day covers: "the time span between
/// `start_date` and `end_date` cannot exceed 30 days" with `stat_time_day`
/// (<https://business-api.tiktok.com/portal/docs?id=1740302848100353>).
const REPORT_DAYS: u64 = 30;
/// The most pages of one report a read follows (1,000 rows a page).
const REPORT_PAGES: u64 = 50;

/// What the advertiser `advertiser` spent per campaign and day from `from` to `to`, read
/// at `base` with the advertiser's `token` (a TikTok for Business app's, with the
/// Reporting permission): the integrated report (`report_type=BASIC`,
/// `data_level=AUCTION_CAMPAIGN`, by `campaign_id` and `stat_time_day`,
/// <https://business-api.tiktok.com/portal/docs?id=1740302848100353>) 30 days at a time,
/// every page, in the advertiser's currency
/// (<https://business-api.tiktok.com/portal/docs?id=1739593083610113>). Days a campaign
/// neither spent nor was clicked are left out.
pub async fn spend(
    http: &Outbound,
    (base, token): (&str, &str),
    advertiser: &str,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, String> {
    let base = base.trim_end_matches('/');
    let ids = json!([advertiser]).to_string();
    let info = business_api(
        http,
        (&format!("{base}/open_api/v1.3/advertiser/info/"), token),
        &[("advertiser_ids", &ids), ("fields", r#"["currency"]"#)],
    )
    .await?;
    let currency = info["list"][0]["currency"].as_str().unwrap_or_default();
    let url = format!("{base}/open_api/v1.3/report/integrated/get/");
    let mut rows = Vec::new();
    let mut start = from;
    while start <= to {
        let end = start
            .checked_add_days(Days::new(REPORT_DAYS - 1))
            .map_or(to, |end| end.min(to));
        for page in 1..=REPORT_PAGES {
            let (page_text, start_text, end_text) =
                (page.to_string(), start.to_string(), end.to_string());
            let query = [
                ("advertiser_id", advertiser),
                ("report_type", "BASIC"),
                ("data_level", "AUCTION_CAMPAIGN"),
                ("dimensions", r#"["campaign_id","stat_time_day"]"#),
                (
                    "metrics",
                    r#"["spend","clicks","impressions","campaign_name"]"#,
                ),
                ("start_date", &start_text),
                ("end_date", &end_text),
                ("page", &page_text),
                ("page_size", "1000"),
            ];
            let data = business_api(http, (&url, token), &query).await?;
            for found in data["list"].as_array().into_iter().flatten() {
                rows.extend(report_row(found, advertiser, currency)?);
            }
            if data["page_info"]["total_page"].as_u64().unwrap_or(1) <= page {
                break;
            }
        }
        let Some(next) = end.succ_opt() else { break };
        start = next;
    }
    Ok(rows)
}

/// One row of the report as spend; `None` for a day without spend or clicks.
fn report_row(found: &Value, advertiser: &str, currency: &str) -> Result<Option<SpendRow>, String> {
    let dimension = |name: &str| found["dimensions"][name].as_str().unwrap_or_default();
    let metric = |name: &str| found["metrics"][name].as_str().unwrap_or_default();
    // `stat_time_day` is `2026-03-01 00:00:00`.
    let day = dimension("stat_time_day").get(..10).unwrap_or_default();
    let date = NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|_| "TikTok's report gave a row without its day".to_owned())?;
    let cost_micros = leadtrack_core::spend::micros(metric("spend"))
        .ok_or_else(|| format!("TikTok's report gave the spend {:?}", metric("spend")))?;
    let clicks = metric("clicks").parse::<u64>().ok();
    if cost_micros == 0 && clicks.unwrap_or_default() == 0 {
        return Ok(None);
    }
    Ok(Some(SpendRow {
        date,
        source: SpendPlatform::Tiktok.source().to_owned(),
        medium: "paid_social".to_owned(),
        account: advertiser.to_owned(),
        campaign_id: Some(dimension("campaign_id").to_owned()).filter(|id| !id.is_empty()),
        campaign: metric("campaign_name").to_owned(),
        currency: currency.to_owned(),
        cost_micros,
        clicks,
        impressions: metric("impressions").parse().ok(),
    }))
}

/// A GET of the Business API at `url` with `query` and the `Access-Token` header: its
/// `data` when `code` is 0, else TikTok's `message`, naming no token.
async fn business_api(
    http: &Outbound,
    (url, token): (&str, &str),
    query: &[(&str, &str)],
) -> Result<Value, String> {
    let request = http
        .get(url)
        .map(|request| request.header("Access-Token", token).query(query));
    let answer = outcome::send(request)
        .await
        .map_err(|failed| crate::api::failure(&failed))?;
    let body = crate::api::json_answer("TikTok", &answer, &[token])?;
    match body["code"].as_i64() {
        Some(0) => Ok(body["data"].clone()),
        code => Err(outcome::scrub(
            format!(
                "TikTok answered code {}: {}",
                code.unwrap_or(-1),
                body["message"].as_str().unwrap_or("no message")
            ),
            &[token],
        )),
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
