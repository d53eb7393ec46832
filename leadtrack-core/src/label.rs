//! Conversion labels: what a CRM rating means for each ad platform, and the mapping that
//! `lost` uses in its place.
//!
//! A project's labels have an order, which its owners set: people rate with the labels that
//! are not archived, in that order, the first nine under the number keys 1 to 9. An archived
//! label is kept for the leads rated with it, their history, the reports and the API (which
//! still accepts its id); a label never used can be deleted.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::types::{IntegrationKind, ProjectId};

/// What a conversion sends to each integration. A label has one; so has `lost`, per project.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelMapping {
    /// GA4 event name, e.g. `qualify_lead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ga4_event: Option<String>,
    /// Meta event name, e.g. `Lead` or a CRM stage name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_event: Option<String>,
    /// Google Ads conversion action: its id, or its resource name
    /// `customers/{customer}/conversionActions/{id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub google_ads_action: Option<String>,
    /// Microsoft Advertising offline conversion goal name, e.g. `Qualified lead`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microsoft_ads_conversion: Option<String>,
    /// LinkedIn conversion rule: its URN `urn:lla:llaPartnerConversion:{id}` (see
    /// [`linkedin_conversion_urn`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linkedin_conversion: Option<String>,
    /// Whether the webhook receives this conversion.
    #[serde(default)]
    pub webhook: bool,
}

impl LabelMapping {
    /// Whether this mapping sends anything to `kind`.
    pub fn maps(&self, kind: IntegrationKind) -> bool {
        match kind {
            IntegrationKind::GoogleAds => self.google_ads_action.is_some(),
            IntegrationKind::Ga4 => self.ga4_event.is_some(),
            IntegrationKind::Meta => self.meta_event.is_some(),
            IntegrationKind::MicrosoftAds => self.microsoft_ads_conversion.is_some(),
            IntegrationKind::Linkedin => self.linkedin_conversion.is_some(),
            IntegrationKind::Webhook => self.webhook,
        }
    }

    /// The mapping with its values checked: a LinkedIn conversion becomes its URN.
    pub fn validate(mut self) -> Result<Self, String> {
        if let Some(conversion) = &self.linkedin_conversion {
            self.linkedin_conversion = Some(linkedin_conversion_urn(conversion)?);
        }
        Ok(self)
    }

    /// The mapping of `lost` in a new project: only the webhook hears of lost leads.
    pub fn default_lost() -> Self {
        Self::webhook_only()
    }

    /// A mapping that sends to the conversion webhook alone.
    pub fn webhook_only() -> Self {
        Self {
            webhook: true,
            ..Self::default()
        }
    }
}

/// A LinkedIn conversion rule as its URN: `urn:lla:llaPartnerConversion:{id}` given as it
/// is, or a bare id (the number Campaign Manager shows) made into one.
pub fn linkedin_conversion_urn(value: &str) -> Result<String, String> {
    const PREFIX: &str = "urn:lla:llaPartnerConversion:";
    let value = value.trim();
    let id = value.strip_prefix(PREFIX).unwrap_or(value);
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(format!("{PREFIX}{id}"))
    } else {
        Err(format!(
            "LinkedIn conversion {value:?} must be a conversion rule's id or its URN, {PREFIX}<id>"
        ))
    }
}

/// A conversion label: what a CRM rating means for the ad platforms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionLabel {
    /// Its UUID, sent as `conversionId`.
    pub id: Uuid,
    /// The project it belongs to.
    pub project_id: ProjectId,
    /// A name for people, e.g. `Qualified`.
    pub name: String,
    /// Whether processed leads become `rated` (else `open`).
    pub mark_as_done: bool,
    /// What it sends to each integration.
    pub mapping: LabelMapping,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Whether it is archived: no longer offered for rating.
    pub archived: bool,
}

/// The labels people rate with, in the project's order: all but the archived ones. The
/// first nine are picked with the number keys 1 to 9.
pub fn rateable(labels: &[ConversionLabel]) -> impl Iterator<Item = &ConversionLabel> {
    labels.iter().filter(|label| !label.archived)
}

/// Checks that `order` names each of the project's labels (`labels`) exactly once.
pub fn check_order(labels: &[Uuid], order: &[Uuid]) -> Result<(), String> {
    let mut given = order.to_vec();
    given.sort_unstable();
    let mut known = labels.to_vec();
    known.sort_unstable();
    if given.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err("a new order names a label twice".to_owned());
    }
    if given != known {
        return Err("a new order names each of the project's labels once".to_owned());
    }
    Ok(())
}

/// `order` with `id` moved one place earlier (`up`) or later; unchanged at either end, or
/// when `id` is not in it.
pub fn moved(order: &[Uuid], id: Uuid, up: bool) -> Vec<Uuid> {
    let mut order = order.to_vec();
    if let Some(at) = order.iter().position(|known| *known == id) {
        let other = if up { at.checked_sub(1) } else { Some(at + 1) };
        if let Some(other) = other.filter(|other| *other < order.len()) {
            order.swap(at, other);
        }
    }
    order
}

/// What a new label is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewLabel {
    /// A name for people.
    pub name: String,
    /// Whether processed leads become `rated`.
    pub mark_as_done: bool,
    /// What it sends to each integration.
    pub mapping: LabelMapping,
}

impl NewLabel {
    /// A label that marks its leads done (`rated`) and sends as `mapping` says.
    pub fn done(name: &str, mapping: LabelMapping) -> Self {
        Self {
            name: name.to_owned(),
            mark_as_done: true,
            mapping,
        }
    }

    /// Checks the label and trims its name; the error says what is wrong.
    pub fn validate(mut self) -> Result<Self, String> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err("a conversion label needs a name".to_owned());
        }
        self.name = name.to_owned();
        self.mapping = self.mapping.validate()?;
        Ok(self)
    }
}

/// The mapping a conversion uses: its label's, or the project's `lost` mapping.
pub fn mapping_for<'a>(
    label: Option<&'a ConversionLabel>,
    lost_mapping: &'a LabelMapping,
) -> &'a LabelMapping {
    label.map_or(lost_mapping, |label| &label.mapping)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linkedin_conversions_are_urns() {
        assert_eq!(
            linkedin_conversion_urn(" 12345 ").unwrap(),
            "urn:lla:llaPartnerConversion:12345"
        );
        assert_eq!(
            linkedin_conversion_urn("urn:lla:llaPartnerConversion:9").unwrap(),
            "urn:lla:llaPartnerConversion:9"
        );
        for bad in [
            "",
            "urn:li:conversion:1",
            "12a",
            "urn:lla:llaPartnerConversion:",
        ] {
            assert!(linkedin_conversion_urn(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn orders_name_every_label_once_and_moves_stop_at_the_ends() {
        let [a, b, c] = [Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4()];
        assert_eq!(check_order(&[a, b, c], &[c, a, b]), Ok(()));
        assert!(check_order(&[a, b, c], &[a, b]).is_err());
        assert!(check_order(&[a, b], &[a, a]).is_err());
        assert!(check_order(&[a, b], &[a, Uuid::new_v4()]).is_err());
        assert_eq!(moved(&[a, b, c], c, true), vec![a, c, b]);
        assert_eq!(moved(&[a, b, c], a, false), vec![b, a, c]);
        assert_eq!(moved(&[a, b, c], a, true), vec![a, b, c]);
        assert_eq!(moved(&[a, b, c], c, false), vec![a, b, c]);
        assert_eq!(moved(&[a, b], Uuid::new_v4(), true), vec![a, b]);
    }

    #[test]
    fn labels_need_a_name() {
        let label = NewLabel::done(" Customer ", LabelMapping::default());
        assert_eq!(label.clone().validate().unwrap().name, "Customer");
        let blank = NewLabel {
            name: "  ".into(),
            ..label
        };
        assert_eq!(
            blank.validate().unwrap_err(),
            "a conversion label needs a name"
        );
    }
}
