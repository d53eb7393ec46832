//! LinkedIn, through the Conversions API.
//!
//! `POST {base}/rest/conversionEvents` with an OAuth access token, the `LinkedIn-Version`
//! header and `X-Restli-Protocol-Version: 2.0.0`, one conversion event: the conversion
//! rule's URN, `conversionHappenedAt` in epoch milliseconds, the value (an amount as a
//! string) and currency, the member's ids (the SHA-256 of the email, and the first-party
//! click id `li_fat_id`), and the job's event id for deduplication
//! (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api>).
//! LinkedIn answers `201 Created`. The optional `userInfo` (names and company in clear text)
//! is not sent: personal data leaves leadtrack only hashed.

use leadtrack_core::integration::LinkedinSettings;
use leadtrack_core::job::ClaimedJob;
use leadtrack_core::types::IntegrationKind;
use serde_json::{Value, json};

use crate::normalize::{self, Rules};
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where events go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.linkedin.com";
/// LinkedIn's token endpoint.
pub const DEFAULT_TOKEN_URL: &str = "https://www.linkedin.com/oauth/v2/accessToken";

/// The conversion event for `job`, to the conversion rule `conversion` (a URN).
pub fn payload(job: &ClaimedJob, conversion: &str) -> Value {
    let lead = &job.lead.data;
    let mut user_ids = Vec::new();
    if let Some(hash) = lead
        .user("email")
        .and_then(|email| normalize::hashed_email(email, Rules::Plain))
    {
        user_ids.push(json!({"idType": "SHA256_EMAIL", "idValue": hash}));
    }
    if let Some(id) = lead.attribution("li_fat_id") {
        user_ids.push(json!({"idType": "LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID", "idValue": id}));
    }
    let mut event = json!({
        "conversion": conversion,
        "conversionHappenedAt": job.job.converted_at.timestamp_millis(),
        "user": {"userIds": user_ids},
        "eventId": job.job.conversion_event_id.to_string(),
    });
    if let Some(cents) = job.job.price {
        event["conversionValue"] = json!({
            "currencyCode": job.project.currency,
            "amount": format!("{:.2}", cents as f64 / 100.0),
        });
    }
    event
}

/// The settings' refresh-token grant at LinkedIn's OAuth endpoint.
pub(crate) fn grant(settings: &LinkedinSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: Some(settings.client_secret.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: None,
    }
}

/// Posts one conversion event, with a token and the versioned headers.
pub(crate) async fn post(
    http: &reqwest::Client,
    tokens: &TokenCache,
    settings: &LinkedinSettings,
    event: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(
        settings.base_url.as_deref(),
        DEFAULT_BASE_URL,
        "/rest/conversionEvents",
    );
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        http.post(&url)
            .bearer_auth(token)
            .header("LinkedIn-Version", &settings.api_version)
            .header("X-Restli-Protocol-Version", "2.0.0")
            .json(event)
    })
    .await
}

/// Reads `path_and_query` (under `/rest/`) of LinkedIn's Marketing API with the
/// integration's credentials, as JSON: the lead sources read lead forms and their
/// responses with it. The error names no credential.
pub async fn read(
    http: &reqwest::Client,
    settings: &LinkedinSettings,
    path_and_query: &str,
) -> Result<Value, String> {
    static TOKENS: std::sync::OnceLock<TokenCache> = std::sync::OnceLock::new();
    let tokens = TOKENS.get_or_init(TokenCache::default);
    let url = outcome::endpoint(
        settings.base_url.as_deref(),
        DEFAULT_BASE_URL,
        &format!("/rest/{path_and_query}"),
    );
    let answer = oauth::send_authorized(http, tokens, &grant(settings), |token| {
        http.get(&url)
            .bearer_auth(token)
            .header("LinkedIn-Version", &settings.api_version)
            .header("X-Restli-Protocol-Version", "2.0.0")
    })
    .await
    .map_err(|failed| match failed {
        Outcome::Retry { error, .. } | Outcome::Failed { error, .. } => error,
        Outcome::Delivered { .. } | Outcome::Skipped { .. } => "no answer".to_owned(),
    })?;
    if !answer.is_success() {
        return Err(error_of(&answer, settings));
    }
    serde_json::from_slice(&answer.body)
        .map_err(|_| "LinkedIn answered something else than JSON".to_owned())
}

/// What a failed answer says (LinkedIn's `message` and `serviceErrorCode` are in the
/// body), without the credentials.
pub(crate) fn error_of(answer: &Answer, settings: &LinkedinSettings) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[
            settings.client_secret.expose(),
            settings.refresh_token.expose(),
        ],
    )
}

/// Sends `job` to LinkedIn.
pub(crate) async fn deliver(
    http: &reqwest::Client,
    tokens: &TokenCache,
    settings: &LinkedinSettings,
    job: &ClaimedJob,
) -> Outcome {
    let Some(conversion) = job.mapping().linkedin_conversion.as_deref() else {
        return Outcome::skipped("the conversion is not mapped to a LinkedIn conversion rule");
    };
    if let Some(skip) = leadtrack_core::rules::skip_reason(
        IntegrationKind::Linkedin,
        &job.lead,
        job.job.converted_at,
    ) {
        return Outcome::skipped(skip.reason);
    }
    let event = payload(job, conversion);
    match post(http, tokens, settings, &event).await {
        Ok(answer) => answer.by_status(|| error_of(&answer, settings)),
        Err(failure) => failure,
    }
}
