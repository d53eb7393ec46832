//! A lead's row as backends store it.

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use crate::import::ImportedLead;
use crate::lead::{LeadData, LeadKeys};

/// A lead's row as a backend stores it: its data as JSON and every value derived from it
/// (match keys, search text, the first and last touch of its channel path), built before
/// the write so that a store's transaction spends its time on SQL alone.
#[derive(Clone, Debug)]
pub struct LeadRow {
    /// The lead's data.
    pub data: LeadData,
    /// `data` as JSON, as stored.
    pub json: String,
    /// The searchable fields, one per line, so that a substring search never matches
    /// across two fields (a search term has its line breaks folded to spaces, see
    /// [`crate::matching::search_term`]).
    pub search_text: String,
    /// What a `q` search looks in ([`q_text`]).
    pub q_text: String,
    /// The normalised values the lead is matched and filtered by.
    pub keys: LeadKeys,
    /// The form name as the `form` filter matches it ([`crate::matching::form_key`]).
    pub form_key: Option<String>,
    /// The first touch's source, medium and campaign, then the last touch's
    /// ([`crate::report::touch_columns`]).
    pub touches: [Option<String>; 6],
}

impl LeadRow {
    /// The rows of imported leads, each with its creation time, made before a backend
    /// takes its connection or writer.
    pub fn of_imported(
        leads: &[ImportedLead],
    ) -> Result<Vec<(Self, DateTime<Utc>)>, serde_json::Error> {
        leads
            .iter()
            .map(|lead| Ok((Self::of(lead.data.clone())?, lead.created_at)))
            .collect()
    }

    /// The row of `data`.
    pub fn of(data: LeadData) -> Result<Self, serde_json::Error> {
        let keys = data.keys();
        let touches = crate::channel::touches(&data);
        let touches =
            crate::report::touch_columns(&touches).map(|column| column.map(str::to_owned));
        Ok(Self {
            json: serde_json::to_string(&data)?,
            search_text: keys.searchable.join("\n"),
            q_text: q_text(&data),
            form_key: data.form_name().map(crate::matching::form_key),
            touches,
            keys,
            data,
        })
    }
}

/// The attribution values a `q` search looks in: the campaign and every platform's click id.
const Q_ATTRIBUTION: [&str; 9] = [
    "utm_campaign",
    "gclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "fbc",
    "msclkid",
    "li_fat_id",
    "ttclid",
];

/// What a `q` search looks in, [`crate::matching::fold`]ed: the fields of `search` (first
/// and last name, email, phone, company), the CRM id (`uniqueIdentifier`), the campaigns
/// of the channel path and of `utm_campaign`, the form's message, and every click id.
///
/// Each distinct word of them once, one a line. A `q` word holds no white space, so it is
/// a substring of a value exactly when it is a substring of one of the value's words, and
/// never matches across two; a word said twice (in a message, say) is kept once.
pub fn q_text(data: &LeadData) -> String {
    let user = ["firstName", "lastName", "email", "phone", "companyName"]
        .into_iter()
        .filter_map(|field| Some((field, data.user(field)?)))
        .map(|(field, value)| {
            // A phone number is kept as its digits alone, which every way of writing it
            // that `q` reads is a substring of (`matching::q_words`).
            let digits = (field == "phone").then(|| crate::matching::phone_digits(value));
            digits.flatten().map_or(Cow::Borrowed(value), Cow::Owned)
        });
    let touches = crate::channel::touches(data);
    let campaigns = touches.iter().filter_map(|touch| touch.campaign.as_deref());
    let attribution = Q_ATTRIBUTION
        .into_iter()
        .filter_map(|name| data.attribution(name));
    let message = data.form_data.get("message").and_then(|m| m.as_str());
    let values: Vec<String> = user
        .chain(
            data.unique_identifier
                .as_deref()
                .into_iter()
                .chain(campaigns)
                .chain(attribution)
                .chain(message)
                .map(Cow::Borrowed),
        )
        .map(|value| crate::matching::fold(&value))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let words: Vec<&str> = values
        .iter()
        .flat_map(|value| value.split_whitespace())
        .filter(|word| seen.insert(*word))
        .collect();
    words.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_text_holds_each_word_of_the_searched_values_folded_once_a_line() {
        let data: LeadData = serde_json::from_value(serde_json::json!({
            "userData": {"firstName": "Jonas", "lastName": "Müller", "email": "J@X.io",
                         "phone": "+49 (0)151 1234-5678"},
            "attributionData": {"utm_campaign": "Frühling", "msclkid": "MsClk-1", "fbp": "fb.1.2"},
            "formData": {"message": "Call me\nafter 5, Jonas: call   me!"},
            "uniqueIdentifier": "CRM-42",
            "channelFlow": r#"[{"ch":{"s":"google","m":"cpc","cm":"Brand"}}]"#
        }))
        .unwrap();
        assert_eq!(
            q_text(&data),
            "jonas\nmuller\nj@x.io\n49015112345678\ncrm-42\nbrand\nfruhling\nmsclk-1\ncall\nme\nafter\n5,\njonas:\nme!"
        );
    }
}
