//! Meta, through the Conversions API.
//!
//! `POST {base}/{api_version}/{pixel_id}/events?access_token=..` with one server event whose
//! `action_source` the integration's settings give (`other` unless told). Graph API errors
//! name their code; the temporary ones are retried.
//!
//! This module holds the requests and how their answers read; a job's delivery is
//! `leadtrack-forward`'s. Here too: Facebook Login's token exchange, the pixel and page pickers
//! ([`pixels`], [`pages`], [`subscribe_page`]), and the initial stage of a Lead Ads lead
//! ([`send_initial_stage`]).

use chrono::{DateTime, NaiveDate, Utc};
use leadtrack_core::integration::MetaSettings;
use leadtrack_core::integration::{DEFAULT_META_API_VERSION, Secret};
use leadtrack_core::lead::{LeadData, StoredLead};
use leadtrack_core::oauth::{OAuthApp, OAuthGrant};
use leadtrack_core::project::Project;
use leadtrack_core::spend::{SpendPlatform, SpendRow};
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::api::{failure, json_answer};
use crate::normalize::{self, Rules};
use crate::oauth::Consent;
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://graph.facebook.com";

/// The most events one request carries: "You can send up to 1,000 events in `data`"
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/using-the-api#send>).
/// Meta refuses the whole request when one event is invalid.
pub const BATCH_SIZE: usize = 1_000;

/// Graph API error codes that mean "try again later": unknown and service errors,
/// throttling (app, user, page, application request limits), temporary unavailability.
const TRANSIENT_CODES: [i64; 7] = [1, 2, 4, 17, 32, 341, 613];

/// `body` with the settings' test event code, if any.
pub fn with_test_code(mut body: Value, settings: &MetaSettings) -> Value {
    if let Some(code) = settings.test_event_code.as_deref() {
        body["test_event_code"] = json!(code);
    }
    body
}

/// The event name of the first stage of the conversion leads funnel, sent when a Lead Ads
/// lead is kept.
pub const INITIAL_STAGE: &str = "Lead";

/// Meta's id of a lead that came from Meta Lead Ads (`formData.metaLeadId`).
pub fn meta_lead_id(lead: &LeadData) -> Option<u64> {
    lead.form_data.get("metaLeadId")?.as_str()?.parse().ok()
}

/// A CRM event for conversion leads, by Meta's payload specification
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/conversion-leads-integration/payload-specification>):
/// the funnel stage as `event_name`, `action_source` `system_generated`, Meta's `lead_id`
/// (with the hashed email and phone) in `user_data`, and `custom_data.event_source` `crm`
/// with `lead_event_source` naming the CRM.
pub fn crm_event(
    lead_id: u64,
    lead: &LeadData,
    region: Option<&str>,
    (stage, at): (&str, DateTime<Utc>),
    mut custom_data: Map<String, Value>,
) -> Value {
    let mut user_data = Map::new();
    user_data.insert("lead_id".into(), json!(lead_id));
    if let Some(hash) = lead
        .user("email")
        .and_then(|v| normalize::hashed_email(v, Rules::Meta))
    {
        user_data.insert("em".into(), json!([hash]));
    }
    if let Some(hash) = lead
        .user("phone")
        .and_then(|v| normalize::hashed_phone(v, region, Rules::Meta))
    {
        user_data.insert("ph".into(), json!([hash]));
    }
    custom_data.insert("event_source".into(), json!("crm"));
    custom_data.insert("lead_event_source".into(), json!("leadtrack"));
    json!({
        "event_name": stage,
        "event_time": at.timestamp(),
        "action_source": "system_generated",
        "user_data": user_data,
        "custom_data": custom_data,
    })
}

/// The initial stage ([`INITIAL_STAGE`]) of a Lead Ads lead just kept, as a body for the
/// pixel's events endpoint; `None` for a lead not from Lead Ads, or kept more than 7 days
/// after it was submitted. Its `event_id` is the same for the same lead, so that Meta drops
/// a second send.
pub fn initial_stage(
    project: &Project,
    lead: &StoredLead,
    settings: &MetaSettings,
    now: DateTime<Utc>,
) -> Option<Value> {
    let lead_id = meta_lead_id(&lead.data)?;
    if now - lead.created_at > max_event_age() {
        return None;
    }
    let region = project.region.as_deref();
    let stage = (INITIAL_STAGE, lead.created_at);
    let event = crm_event(lead_id, &lead.data, region, stage, Map::new());
    let event_id = Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("meta-lead:{lead_id}").as_bytes(),
    );
    let body = json!({"data": [with_id(event, &event_id.to_string())]});
    Some(with_test_code(body, settings))
}

/// Sends the initial stage of a Lead Ads lead just kept to the project's Meta integration,
/// outside the job model (no job, nothing pending); what went wrong, naming no secret.
pub async fn send_initial_stage(
    http: &Outbound,
    settings: &MetaSettings,
    project: &Project,
    lead: &StoredLead,
) -> Result<(), String> {
    let Some(body) = initial_stage(project, lead, settings, Utc::now()) else {
        return Ok(());
    };
    let answer = match post(http, settings, &body).await {
        Ok(answer) => classify(&answer, &[settings.access_token.expose()]),
        Err(failure) => failure,
    };
    match answer {
        Outcome::Delivered { .. } | Outcome::Skipped { .. } => Ok(()),
        Outcome::Retry { error, .. } | Outcome::Failed { error, .. } => Err(error),
    }
}

/// A Graph API error body.
#[derive(Deserialize)]
struct GraphError {
    error: GraphErrorDetail,
}

#[derive(Deserialize)]
struct GraphErrorDetail {
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Option<i64>,
    #[serde(default)]
    error_subcode: Option<i64>,
    #[serde(default)]
    is_transient: Option<bool>,
}

/// Reads Meta's answer: success, or a Graph error whose code (or `is_transient`) says
/// whether a retry can help.
pub fn classify(answer: &Answer, secrets: &[&str]) -> Outcome {
    if answer.is_success() {
        return Outcome::Delivered {
            status: answer.status,
        };
    }
    let Ok(GraphError { error }) = serde_json::from_slice::<GraphError>(&answer.body) else {
        return answer.by_status(|| {
            outcome::scrub(
                format!("HTTP {}: {}", answer.status, answer.snippet()),
                secrets,
            )
        });
    };
    let code = error.code.unwrap_or_default();
    let description = outcome::scrub(
        outcome::short(&format!(
            "Meta error {code}{}: {}",
            error
                .error_subcode
                .map(|sub| format!("/{sub}"))
                .unwrap_or_default(),
            error.message
        )),
        secrets,
    );
    let transient = error.is_transient == Some(true)
        || TRANSIENT_CODES.contains(&code)
        || outcome::is_retryable_status(answer.status);
    if transient {
        Outcome::Retry {
            status: Some(answer.status),
            error: description,
            retry_after: answer.retry_after,
        }
    } else {
        Outcome::Failed {
            status: Some(answer.status),
            error: description,
        }
    }
}

/// Posts `body` to the pixel's events endpoint, with the settings' token.
pub async fn post(
    http: &Outbound,
    settings: &MetaSettings,
    body: &Value,
) -> Result<Answer, Outcome> {
    let path = format!(
        "/{}/{}/events",
        settings.api_version.trim_matches('/'),
        settings.pixel_id
    );
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, &path);
    let request = http.post(&url).map(|request| {
        request
            .query(&[("access_token", settings.access_token.expose())])
            .json(body)
    });
    outcome::send(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: Value) -> Answer {
        Answer {
            status,
            retry_after: None,
            body: body.to_string().into_bytes(),
        }
    }

    #[test]
    fn graph_error_codes_decide_retry_or_failure() {
        let error = |code: i64| json!({"error": {"message": "m", "type": "OAuthException", "code": code, "fbtrace_id": "t"}});
        for code in TRANSIENT_CODES {
            assert!(
                matches!(
                    classify(&answer(400, error(code)), &[]),
                    Outcome::Retry { .. }
                ),
                "{code}"
            );
        }
        for code in [100, 190, 200, 294] {
            let outcome = classify(&answer(400, error(code)), &[]);
            assert!(matches!(outcome, Outcome::Failed { .. }), "{code}");
        }
        let transient = json!({"error": {"message": "m", "code": 100, "is_transient": true}});
        assert!(matches!(
            classify(&answer(400, transient), &[]),
            Outcome::Retry { .. }
        ));
        assert!(matches!(
            classify(&answer(503, json!("down")), &[]),
            Outcome::Retry { .. }
        ));
        assert_eq!(
            classify(&answer(200, json!({"events_received": 1})), &[]),
            Outcome::Delivered { status: 200 }
        );
    }

    #[test]
    fn error_messages_name_the_code_and_hide_the_token() {
        let body = json!({"error": {"message": "Invalid OAuth access token EAABsecret.", "code": 190, "error_subcode": 463}});
        let Outcome::Failed { error, status } = classify(&answer(400, body), &["EAABsecret"])
        else {
            panic!("a bad token is permanent");
        };
        assert_eq!(status, Some(400));
        assert_eq!(error, "Meta error 190/463: Invalid OAuth access token ***.");
    }
}

/// Meta's exchange (<https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow>):
/// the code for a short-lived user token (a GET), that token for a long-lived one (60
/// days; <https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived>),
/// and who signed in from `/me`.
pub(crate) async fn exchange(
    http: &Outbound,
    app: &OAuthApp,
    (code, verifier): (&str, &str),
    redirect_uri: &str,
) -> Result<Consent, String> {
    let secret = app.client_secret.expose();
    let short = graph(
        http,
        &app.endpoints.token,
        &[
            ("client_id", app.client_id.as_str()),
            ("redirect_uri", redirect_uri),
            ("client_secret", secret),
            ("code", code),
            ("code_verifier", verifier),
        ],
        &[secret, code, verifier],
    )
    .await?;
    let short = short["access_token"]
        .as_str()
        .ok_or("Meta gave no access token")?;
    let long = graph(
        http,
        &app.endpoints.token,
        &[
            ("grant_type", "fb_exchange_token"),
            ("client_id", app.client_id.as_str()),
            ("client_secret", secret),
            ("fb_exchange_token", short),
        ],
        &[secret, short],
    )
    .await?;
    let token = long["access_token"]
        .as_str()
        .ok_or("Meta gave no long-lived token")?;
    let me = format!("{}/{DEFAULT_META_API_VERSION}/me", app.endpoints.api);
    let me = graph(
        http,
        &me,
        &[("fields", "name"), ("access_token", token)],
        &[token],
    )
    .await?;
    Ok(Consent {
        account: me["name"]
            .as_str()
            .unwrap_or("your Meta account")
            .to_owned(),
        refresh_token: Secret::new(token),
    })
}

/// A Graph API GET of `url` with `query`, as JSON; the error names no secret.
async fn graph(
    http: &Outbound,
    url: &str,
    query: &[(&str, &str)],
    secrets: &[&str],
) -> Result<serde_json::Value, String> {
    let answer = outcome::send(http.get(url).map(|request| request.query(query)))
        .await
        .map_err(|failed| outcome::scrub(failure(&failed), secrets))?;
    json_answer("Meta", &answer, secrets)
}

/// The most pages of Insights one read follows (500 rows a page).
const INSIGHTS_PAGES: usize = 50;

/// What the ad account `account` (digits, without `act_`) spent per campaign and day from
/// `from` to `to`: its Insights at `level=campaign` with `time_increment=1`, each row's
/// `spend` a decimal string in the account's currency, with `clicks` and `impressions`
/// (<https://developers.facebook.com/docs/marketing-api/insights/parameters>), the pages
/// followed by `paging.next`
/// (<https://developers.facebook.com/docs/graph-api/results>). Read with the grant's token
/// (`ads_management` reads Insights).
pub async fn spend(
    http: &Outbound,
    (app, grant): (&OAuthApp, &OAuthGrant),
    account: &str,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, String> {
    let token = grant.refresh_token.expose();
    let url = format!(
        "{}/{DEFAULT_META_API_VERSION}/act_{account}/insights",
        app.endpoints.api
    );
    let range = serde_json::json!({"since": from.to_string(), "until": to.to_string()}).to_string();
    let query = [
        ("level", "campaign"),
        ("time_increment", "1"),
        (
            "fields",
            "campaign_id,campaign_name,spend,clicks,impressions,account_currency",
        ),
        ("time_range", range.as_str()),
        ("limit", "500"),
        ("access_token", token),
    ];
    let mut page = graph(http, &url, &query, &[token]).await?;
    let mut rows = Vec::new();
    for _ in 0..INSIGHTS_PAGES {
        for found in page["data"].as_array().into_iter().flatten() {
            rows.push(spend_row(found, account)?);
        }
        let Some(next) = page["paging"]["next"].as_str().map(str::to_owned) else {
            break;
        };
        page = graph(http, &next, &[], &[token]).await?;
    }
    Ok(rows)
}

/// One row of Insights as spend.
fn spend_row(found: &serde_json::Value, account: &str) -> Result<SpendRow, String> {
    let text = |name: &str| found[name].as_str().unwrap_or_default();
    let count = |name: &str| text(name).parse::<u64>().ok();
    let date = NaiveDate::parse_from_str(text("date_start"), "%Y-%m-%d")
        .map_err(|_| "Meta's Insights gave a row without its day".to_owned())?;
    let cost_micros = leadtrack_core::spend::micros(text("spend"))
        .ok_or_else(|| format!("Meta's Insights gave the spend {:?}", text("spend")))?;
    Ok(SpendRow {
        date,
        source: SpendPlatform::Meta.source().to_owned(),
        medium: "paid_social".to_owned(),
        account: account.to_owned(),
        campaign_id: Some(text("campaign_id").to_owned()).filter(|id| !id.is_empty()),
        campaign: text("campaign_name").to_owned(),
        currency: text("account_currency").to_owned(),
        cost_micros,
        clicks: count("clicks"),
        impressions: count("impressions"),
    })
}

/// A Meta pixel (dataset) the signed-in person reaches, with its ad account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaPixel {
    /// The pixel's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The name of the ad account it belongs to.
    pub account: String,
}

/// The pixels of every ad account the grant reaches: `/me/adaccounts`
/// (<https://developers.facebook.com/docs/marketing-api/reference/user/adaccounts>), then
/// each account's `adspixels`
/// (<https://developers.facebook.com/docs/marketing-api/reference/ad-account/adspixels>).
pub async fn pixels(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MetaPixel>, String> {
    let token = grant.refresh_token.expose();
    let base = format!("{}/{DEFAULT_META_API_VERSION}", app.endpoints.api);
    let accounts = graph(
        http,
        &format!("{base}/me/adaccounts"),
        &[("fields", "name,account_id"), ("access_token", token)],
        &[token],
    )
    .await?;
    let mut pixels = Vec::new();
    for account in accounts["data"].as_array().cloned().unwrap_or_default() {
        let (Some(id), Some(name)) = (account["account_id"].as_str(), account["name"].as_str())
        else {
            continue;
        };
        let found = graph(
            http,
            &format!("{base}/act_{id}/adspixels"),
            &[("fields", "name"), ("access_token", token)],
            &[token],
        )
        .await?;
        for pixel in found["data"].as_array().cloned().unwrap_or_default() {
            if let (Some(pixel_id), Some(pixel_name)) =
                (pixel["id"].as_str(), pixel["name"].as_str())
            {
                pixels.push(MetaPixel {
                    id: pixel_id.to_owned(),
                    name: pixel_name.to_owned(),
                    account: name.to_owned(),
                });
            }
        }
    }
    Ok(pixels)
}

/// A Facebook page the signed-in person manages, for Lead Ads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaPage {
    /// The page's id.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// The pages the grant's person manages, with each page's own token: `/me/accounts`
/// (<https://developers.facebook.com/docs/graph-api/reference/user/accounts/>). The tokens
/// stay on the server.
async fn pages_with_tokens(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<(MetaPage, Secret)>, String> {
    let token = grant.refresh_token.expose();
    let url = format!(
        "{}/{DEFAULT_META_API_VERSION}/me/accounts",
        app.endpoints.api
    );
    let query = [("fields", "id,name,access_token"), ("access_token", token)];
    let listed = graph(http, &url, &query, &[token]).await?;
    let pages = listed["data"].as_array().cloned().unwrap_or_default();
    Ok(pages
        .iter()
        .filter_map(|page| {
            let page_token = page["access_token"].as_str()?;
            Some((
                MetaPage {
                    id: page["id"].as_str()?.to_owned(),
                    name: page["name"].as_str().unwrap_or("(no name)").to_owned(),
                },
                Secret::new(page_token),
            ))
        })
        .collect())
}

/// The pages the grant's person manages.
pub async fn pages(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MetaPage>, String> {
    let pages = pages_with_tokens(http, app, grant).await?;
    Ok(pages.into_iter().map(|(page, _)| page).collect())
}

/// Subscribes the server's app to the page's new leads (`POST /{page}/subscribed_apps`
/// with `subscribed_fields=leadgen`,
/// <https://developers.facebook.com/docs/graph-api/webhooks/getting-started/webhooks-for-leadgen/>),
/// and returns the page's token, which reads them. The error names no token.
pub async fn subscribe_page(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
    page_id: &str,
) -> Result<Secret, String> {
    let pages = pages_with_tokens(http, app, grant).await?;
    let (_, page_token) = pages
        .into_iter()
        .find(|(page, _)| page.id == page_id)
        .ok_or("the page is not one the signed-in person manages")?;
    let url = format!(
        "{}/{DEFAULT_META_API_VERSION}/{page_id}/subscribed_apps",
        app.endpoints.api
    );
    let token = page_token.expose();
    let request = http
        .post(&url)
        .map(|request| request.query(&[("subscribed_fields", "leadgen"), ("access_token", token)]));
    let answer = outcome::send(request)
        .await
        .map_err(|failed| outcome::scrub(failure(&failed), &[token]))?;
    let answered = json_answer("Meta", &answer, &[token])?;
    if answered["success"] != json!(true) {
        return Err("Meta did not subscribe the app to the page's leads".to_owned());
    }
    Ok(page_token)
}

/// `event` with its `event_id`, by which Meta drops an event it has already.
pub fn with_id(mut event: Value, event_id: &str) -> Value {
    event["event_id"] = json!(event_id);
    event
}

/// How old an event Meta takes: "event_time ... can be up to 7 days before you send an
/// event to Meta. If any event_time in data is greater than 7 days in the past, we return
/// an error for the entire request"
/// (<https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/server-event#event-time>).
pub fn max_event_age() -> chrono::Duration {
    chrono::Duration::days(7)
}
