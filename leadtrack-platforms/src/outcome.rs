//! How a delivery attempt ends, and the rules that read it off a platform's HTTP answer.

use std::time::Duration;

use leadtrack_core::target::Refusal;
use leadtrack_core::time::parse_retry_after;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How one delivery attempt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The platform accepted the conversion.
    Delivered {
        /// Its HTTP status.
        status: u16,
    },
    /// Not sent: the lead or the settings lack what the platform needs.
    Skipped {
        /// Why, for people.
        reason: String,
    },
    /// A temporary failure: try again later.
    Retry {
        /// The HTTP status, when the platform answered.
        status: Option<u16>,
        /// What went wrong, briefly.
        error: String,
        /// How long the platform asked to wait.
        retry_after: Option<Duration>,
    },
    /// A permanent failure: sending the same again would fail the same way.
    Failed {
        /// The HTTP status, when the platform answered.
        status: Option<u16>,
        /// What went wrong, briefly.
        error: String,
    },
}

impl Outcome {
    /// A skip, for people.
    pub fn skipped(reason: impl Into<String>) -> Self {
        Self::Skipped {
            reason: reason.into(),
        }
    }
}

/// The URL of `path` on a platform: at the settings' `base` (a test server) when given,
/// else at the platform's `default` host.
pub fn endpoint(base: Option<&str>, default: &str, path: &str) -> String {
    format!("{}{path}", base.unwrap_or(default).trim_end_matches('/'))
}

/// A platform's answer to one request.
#[derive(Debug)]
pub struct Answer {
    /// Its HTTP status.
    pub status: u16,
    /// How long it asked to wait (`Retry-After`).
    pub retry_after: Option<Duration>,
    /// Its body.
    pub body: Vec<u8>,
}

impl Answer {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text, shortened for an error message: text only (what a Test button
    /// shows of any answer), never the bytes of a body that is not text.
    pub fn snippet(&self) -> String {
        match std::str::from_utf8(&self.body) {
            Ok(text) => short(text),
            Err(_) => format!("({} bytes that are not text)", self.body.len()),
        }
    }

    /// The outcome by HTTP status alone: 2xx delivered; 408, 429 and 5xx but 501 are
    /// temporary; any other status is permanent. `error` describes a failure.
    pub fn by_status(&self, error: impl FnOnce() -> String) -> Outcome {
        let status = self.status;
        if self.is_success() {
            Outcome::Delivered { status }
        } else if is_retryable_status(status) {
            Outcome::Retry {
                status: Some(status),
                error: error(),
                retry_after: self.retry_after,
            }
        } else {
            Outcome::Failed {
                status: Some(status),
                error: error(),
            }
        }
    }
}

/// 408, 429 and 5xx except 501 are worth retrying.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429) || ((500..600).contains(&status) && status != 501)
}

/// Sends a request and reads the whole answer. An address the server's rule refuses, at
/// once or when its name resolves, is a permanent failure that says why. A request that
/// fails on the way (timeout, refused connection, broken TLS) is a temporary failure; its
/// message never carries the URL, which may hold credentials in its query.
pub async fn send(request: Result<reqwest::RequestBuilder, Refusal>) -> Result<Answer, Outcome> {
    let transport = |err: reqwest::Error| {
        if let Some(refusal) = leadtrack_outbound::refusal(&err) {
            return refused(refusal.clone());
        }
        let error = if err.is_timeout() {
            "timed out".to_owned()
        } else if err.is_connect() {
            "connection failed".to_owned()
        } else {
            short(&err.without_url().to_string())
        };
        Outcome::Retry {
            status: None,
            error,
            retry_after: None,
        }
    };
    let response = request.map_err(refused)?.send().await.map_err(transport)?;
    let status = response.status().as_u16();
    let retry_after = retry_after(response.headers());
    let body = response.bytes().await.map_err(transport)?.to_vec();
    Ok(Answer {
        status,
        retry_after,
        body,
    })
}

/// The outcome of a request to an address the rule refuses: permanent, until the address
/// or the operator's exceptions change.
pub fn refused(refusal: Refusal) -> Outcome {
    Outcome::Failed {
        status: None,
        error: refusal.to_string(),
    }
}

/// `Retry-After` as seconds or as an HTTP date ([`parse_retry_after`]).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(value, chrono::Utc::now())
}

/// At most 200 characters of `text`, on one line, without control characters.
pub fn short(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(char::is_control, "");
    if line.chars().count() > 200 {
        format!("{}...", line.chars().take(200).collect::<String>())
    } else {
        line
    }
}

/// `text` with every occurrence of the given secrets masked.
pub fn scrub(text: String, secrets: &[&str]) -> String {
    secrets
        .iter()
        .filter(|secret| secret.len() >= 4)
        .fold(text, |text, secret| text.replace(secret, "***"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn answer(status: u16) -> Answer {
        Answer {
            status,
            retry_after: None,
            body: b"{\"error\": \"x\"}".to_vec(),
        }
    }

    #[test]
    fn statuses_map_to_outcomes() {
        assert_eq!(
            answer(200).by_status(String::new),
            Outcome::Delivered { status: 200 }
        );
        assert_eq!(
            answer(204).by_status(String::new),
            Outcome::Delivered { status: 204 }
        );
        for status in [408, 429, 500, 502, 503, 504, 599] {
            assert!(
                matches!(answer(status).by_status(String::new), Outcome::Retry { .. }),
                "{status}"
            );
        }
        for status in [301, 400, 401, 403, 404, 409, 410, 422, 501] {
            assert!(
                matches!(
                    answer(status).by_status(String::new),
                    Outcome::Failed { .. }
                ),
                "{status}"
            );
        }
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("120"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(120)));
        let later = (chrono::Utc::now() + chrono::Duration::seconds(300)).to_rfc2822();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(&later).unwrap());
        let parsed = retry_after(&headers).unwrap();
        assert!(parsed > Duration::from_secs(290) && parsed <= Duration::from_secs(300));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn messages_are_short_and_secret_free() {
        assert_eq!(short("a\n  b"), "a b");
        assert_eq!(short("bell\u{7}s"), "bells");
        let binary = Answer {
            status: 200,
            retry_after: None,
            body: vec![0xff, 0xfe, 0x00, 0x01],
        };
        assert_eq!(binary.snippet(), "(4 bytes that are not text)");
        assert_eq!(short(&"x".repeat(300)).len(), 203);
        assert_eq!(
            scrub("token EAAB123 rejected".into(), &["EAAB123", ""]),
            "token *** rejected"
        );
    }
}
