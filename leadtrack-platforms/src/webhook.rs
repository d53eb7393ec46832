//! Signed JSON webhooks: the conversion webhook (a rating, posted to the integration's
//! URL) and lead webhooks (each event a webhook subscribes to, posted to its URL).
//!
//! The body is a JSON event; the header `X-Leadtrack-Signature: t=<unix>,v1=<hex>` carries
//! the HMAC-SHA256, keyed with the webhook's secret, of `"<t>.<body>"`. A receiver
//! recomputes it over the raw body to verify the origin, and rejects old `t` values to
//! refuse replays. `X-Leadtrack-Event` repeats the event id, stable across retries, for
//! receivers that deduplicate.
//!
//! Here: the signature and the signed post; what each event says is `leadtrack-forward`'s.

use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use leadtrack_core::integration::Secret;
use leadtrack_outbound::Outbound;
use sha2::Sha256;

use crate::outcome::{self, Answer, Outcome};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Leadtrack-Signature";
/// The event id header.
pub const EVENT_HEADER: &str = "X-Leadtrack-Event";

/// `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes keys of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "t={timestamp},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// What a failed answer says, without the secret.
pub fn error_of(answer: &Answer, secret: &Secret) -> String {
    outcome::scrub(
        format!("HTTP {}: {}", answer.status, answer.snippet()),
        &[secret.expose()],
    )
}

/// One signed post to a webhook.
pub struct Post<'a> {
    /// Where to.
    pub url: &'a str,
    /// What signs it.
    pub secret: &'a Secret,
    /// The event's id, in its own header.
    pub event_id: &'a str,
    /// The JSON body.
    pub body: String,
}

/// Posts `post`, signed at `now`.
pub async fn post(
    http: &Outbound,
    Post {
        url,
        secret,
        event_id,
        body,
    }: Post<'_>,
    now: DateTime<Utc>,
) -> Result<Answer, Outcome> {
    let body = body.into_bytes();
    let signature = signature(secret.expose(), now.timestamp(), &body);
    let request = http.post(url).map(|request| {
        request
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(SIGNATURE_HEADER, signature)
            .header(EVENT_HEADER, event_id)
            .body(body)
    });
    outcome::send(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_of_timestamp_dot_body() {
        // The same construction as Stripe's `v1` scheme, checked against its known value.
        assert_eq!(
            signature("whsec_test", 1_700_000_000, br#"{"id":"evt_1"}"#),
            "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
        );
    }
}
