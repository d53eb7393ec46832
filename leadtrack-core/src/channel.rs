//! Where a lead came from: the touches of its channel path, read from `channelFlow` in the
//! tag-manager tag's format (CONTRACT.md section 9: a JSON array of
//! `{"t": ms, "ch": {"s": source, "m": medium, "cm": campaign, "ct", "tm"}, "lp": url}`, or
//! that array URL-encoded as the `lt_channelflow` cookie), else from the `utm_*` of
//! `attributionData`.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::lead::LeadData;

/// The source of a touch nothing is known of.
pub const NOT_SET: &str = "(not set)";

/// One step of a lead's way to the form: a visit from a channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touch {
    /// `google`, `facebook`, `(direct)`, a referring host, ...
    pub source: String,
    /// `cpc`, `email`, `referral`, `(none)`, ...
    pub medium: String,
    /// The campaign, when the touch had one.
    pub campaign: Option<String>,
    /// When the visit began, when known.
    pub at: Option<DateTime<Utc>>,
    /// The page the visit landed on, when known.
    pub landing_page: Option<String>,
}

impl Touch {
    /// `source / medium`, e.g. `google / cpc`.
    pub fn label(&self) -> String {
        format!("{} / {}", self.source, self.medium)
    }
}

/// The lead's touches, oldest first: its channel path, else one touch from its `utm_*`
/// attribution, else none.
pub fn touches(data: &LeadData) -> Vec<Touch> {
    let from_flow = data
        .channel_flow
        .as_deref()
        .map(parse_flow)
        .unwrap_or_default();
    if !from_flow.is_empty() {
        return from_flow;
    }
    match data.attribution("utm_source") {
        Some(source) => vec![Touch {
            source: source.to_owned(),
            medium: data.attribution("utm_medium").unwrap_or(NOT_SET).to_owned(),
            campaign: data.attribution("utm_campaign").map(str::to_owned),
            at: None,
            landing_page: None,
        }],
        None => Vec::new(),
    }
}

/// The first and the last touch; `None` when nothing is known of where the lead came from.
pub fn first_and_last(touches: &[Touch]) -> Option<(&Touch, &Touch)> {
    Some((touches.first()?, touches.last()?))
}

/// The entries of a channel flow in either of its written forms; entries without a source
/// are skipped, and anything unreadable is no touch at all.
fn parse_flow(text: &str) -> Vec<Touch> {
    let text = text.trim();
    let parsed = serde_json::from_str::<Value>(text).ok().or_else(|| {
        let decoded: String = form_urlencoded::parse(format!("x={text}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())?;
        serde_json::from_str::<Value>(&decoded).ok()
    });
    let Some(Value::Array(entries)) = parsed else {
        return Vec::new();
    };
    entries.iter().filter_map(touch).collect()
}

fn touch(entry: &Value) -> Option<Touch> {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let channel = entry.get("ch")?;
    Some(Touch {
        source: text(channel.get("s"))?,
        medium: text(channel.get("m")).unwrap_or_else(|| NOT_SET.to_owned()),
        campaign: text(channel.get("cm")),
        at: entry
            .get("t")
            .and_then(Value::as_i64)
            .and_then(DateTime::from_timestamp_millis),
        landing_page: text(entry.get("lp")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(channel_flow: Option<&str>, attribution: Value) -> LeadData {
        LeadData {
            channel_flow: channel_flow.map(str::to_owned),
            attribution_data: serde_json::from_value(attribution).unwrap(),
            ..LeadData::default()
        }
    }

    const FLOW: &str = r#"[{"t":1773570600000,"ch":{"s":"google","m":"cpc","cm":"spring","ct":"","tm":""},"lp":"https://shop.example/?gclid=x"},{"t":1773657000000,"ch":{"s":"(direct)","m":"(none)","cm":"","ct":"","tm":""},"lp":"https://shop.example/contact"}]"#;

    #[test]
    fn the_tags_json_and_the_cookie_string_read_alike() {
        let encoded: String = form_urlencoded::byte_serialize(FLOW.as_bytes()).collect();
        for flow in [FLOW, encoded.as_str()] {
            let touches = touches(&data(Some(flow), json!({})));
            let (first, last) = first_and_last(&touches).unwrap();
            assert_eq!(first.label(), "google / cpc");
            assert_eq!(first.campaign.as_deref(), Some("spring"));
            assert_eq!(first.at.unwrap().timestamp_millis(), 1_773_570_600_000);
            assert_eq!(last.label(), "(direct) / (none)");
            assert_eq!(last.campaign, None);
            assert_eq!(
                last.landing_page.as_deref(),
                Some("https://shop.example/contact")
            );
        }
    }

    #[test]
    fn utm_attribution_stands_in_for_a_missing_flow() {
        let touches = touches(&data(
            Some("direct"),
            json!({"utm_source": "newsletter", "utm_campaign": "may"}),
        ));
        assert_eq!(touches.len(), 1);
        assert_eq!(touches[0].label(), "newsletter / (not set)");
        assert_eq!(touches[0].campaign.as_deref(), Some("may"));
        assert!(super::touches(&data(None, json!({}))).is_empty());
        assert!(first_and_last(&[]).is_none());
    }

    #[test]
    fn entries_without_a_source_are_skipped() {
        let flow = r#"[{"ch":{"m":"cpc"}},{"t":"x","ch":{"s":"bing"}},7]"#;
        let touches = touches(&data(Some(flow), json!({})));
        assert_eq!(touches.len(), 1);
        assert_eq!(
            (touches[0].label(), touches[0].at),
            ("bing / (not set)".to_owned(), None)
        );
    }
}
