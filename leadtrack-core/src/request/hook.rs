//! REST hook subscriptions (`POST /api/hooks`, `GET /api/hooks/sample`): what an
//! automation tool sends to subscribe to one event, checked into a [`NewWebhook`].

use serde_json::Value;

use super::fields::{self, Errors};
use crate::error::ValidationError;
use crate::target::Targets;
use crate::webhook::{NewWebhook, WebhookError, WebhookEvent, WebhookEvents};

/// The body of `POST /api/hooks`, `{"targetUrl": "https://…", "event": "lead.created"}`,
/// as a REST hook to add: the URL one `targets` allows, one event of the lead webhooks'.
/// Other properties are ignored (Zapier sends its own, such as `subscription_url`).
///
/// Errors: `400 invalid_json`; `missing_field` for an absent `targetUrl` or `event`;
/// `invalid_field` for one of the wrong type, an unknown event, or an address the server
/// may not call.
pub fn hook_from_body(body: &[u8], targets: &Targets) -> Result<NewWebhook, ValidationError> {
    let mut body = fields::parse_object(body)?;
    let mut errors = Errors::default();
    let mut text = |name: &str| match fields::take(&mut body, name, None) {
        None => Err(ValidationError::missing_field(name)),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => {
            let detail = format!("must be a string, not {}", fields::type_name(&other));
            errors.push(name, detail);
            Ok(None)
        }
    };
    let (url, event) = (text("targetUrl")?, text("event")?);
    let event = event.and_then(|name| match name.trim().parse::<WebhookEvent>() {
        Ok(event) => Some(event),
        Err(_) => {
            errors.push("event", unknown_event());
            None
        }
    });
    let (Some(url), Some(event)) = errors.finish((url, event))? else {
        unreachable!("a missing value is an error recorded")
    };
    NewWebhook::rest_hook(&url, targets, event).map_err(|err| match err {
        WebhookError::Url(refusal) => {
            ValidationError::invalid_field("targetUrl", &format!("cannot be called: {refusal}"))
        }
        other => ValidationError::invalid_field("targetUrl", &other.to_string()),
    })
}

/// The event of `GET /api/hooks/sample?event=…`. Errors: `400 invalid_query` when it is
/// absent or names no event.
pub fn sample_event(
    pairs: impl IntoIterator<Item = (String, String)>,
) -> Result<WebhookEvent, ValidationError> {
    let value = pairs
        .into_iter()
        .find(|(name, _)| name == "event")
        .map(|(_, value)| value);
    match value {
        None => Err(ValidationError::invalid_query("event", "is required")),
        Some(name) => name
            .trim()
            .parse()
            .map_err(|_| ValidationError::invalid_query("event", &unknown_event())),
    }
}

fn unknown_event() -> String {
    format!("must be one of {}", WebhookEvents::all())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn parse(body: &str) -> Result<NewWebhook, ValidationError> {
        hook_from_body(body.as_bytes(), &Targets::default())
    }

    #[test]
    fn a_target_and_one_event_make_a_rest_hook() {
        let hook = parse(
            r#"{"targetUrl": " https://hooks.zapier.com/hooks/standard/1/abc/ ",
                "event": "lead.converted", "subscription_url": "ignored"}"#,
        )
        .unwrap();
        assert_eq!(hook.url, "https://hooks.zapier.com/hooks/standard/1/abc/");
        assert_eq!(
            hook.events.iter().collect::<Vec<_>>(),
            [WebhookEvent::LeadConverted]
        );
        assert_eq!(hook.kind, crate::webhook::WebhookKind::RestHook);
        assert!(hook.secret.expose().starts_with("whsec_"));
    }

    #[test]
    fn each_mistake_is_named_by_its_field() {
        let cases = [
            (
                "[]",
                ErrorCode::InvalidJson,
                "Request body must be a JSON object: found an array",
            ),
            (
                r#"{"event": "lead.created"}"#,
                ErrorCode::MissingField,
                "Missing required field: targetUrl",
            ),
            (
                r#"{"targetUrl": "https://a.example"}"#,
                ErrorCode::MissingField,
                "Missing required field: event",
            ),
            (
                r#"{"targetUrl": 7, "event": "lead.deleted"}"#,
                ErrorCode::InvalidField,
                "Invalid field: targetUrl must be a string, not a number (and 1 more)",
            ),
            (
                r#"{"targetUrl": "https://a.example", "event": "lead.deleted"}"#,
                ErrorCode::InvalidField,
                "Invalid field: event must be one of lead.created, lead.updated, lead.converted, lead.lost, lead.erased",
            ),
            (
                r#"{"targetUrl": "http://a.example/x", "event": "lead.lost"}"#,
                ErrorCode::InvalidField,
                "Invalid field: targetUrl cannot be called: http:// would send in clear text; give an https:// address (the server's operator can allow http://)",
            ),
            (
                r#"{"targetUrl": "https://127.0.0.1/x", "event": "lead.lost"}"#,
                ErrorCode::InvalidField,
                "Invalid field: targetUrl cannot be called: the address is loopback (127.0.0.1); the server's operator can allow it",
            ),
        ];
        for (body, code, message) in cases {
            let err = parse(body).unwrap_err();
            assert_eq!((err.code, err.message.as_str()), (code, message), "{body}");
        }
    }

    #[test]
    fn the_operator_may_allow_loopback_targets() {
        let local = Targets::new("127.0.0.0/8", true).unwrap();
        let body = br#"{"targetUrl": "http://127.0.0.1:9/x", "event": "lead.created"}"#;
        assert_eq!(
            hook_from_body(body, &local).unwrap().url,
            "http://127.0.0.1:9/x"
        );
    }

    #[test]
    fn the_sample_names_one_event() {
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .collect()
        };
        assert_eq!(
            sample_event(pairs(&[("event", "lead.lost")])),
            Ok(WebhookEvent::LeadLost)
        );
        assert_eq!(
            sample_event(pairs(&[])).unwrap_err().message,
            "Invalid query parameter: event is required"
        );
        assert_eq!(
            sample_event(pairs(&[("event", "x")])).unwrap_err().code,
            ErrorCode::InvalidQuery
        );
    }
}
