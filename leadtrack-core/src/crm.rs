//! CRM syncs: a project's leads kept in the CRM its sales team works in (HubSpot or
//! Pipedrive).
//!
//! A sync is a subscriber to the project's lead events, kept and queued like a lead webhook
//! (of kind [`crate::webhook::WebhookKind::Hubspot`] or `Pipedrive`): each new or merged
//! lead makes or updates its contact, and each rating creates or moves the lead's one
//! deal, at the stage its label maps to.
//! What the CRM calls the lead's contact and deal is kept per lead ([`CrmRecord`]), so a
//! re-rating moves the same deal and never makes a second one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where a sync puts deals: the pipeline, and the stage each rating moves a deal to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrmOptions {
    /// The deal pipeline's id; the CRM's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<String>,
    /// The stage id per label name (lowercase) or `lost`.
    #[serde(default)]
    pub stages: BTreeMap<String, String>,
}

/// Why a sync's options were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CrmError {
    /// A `--stage` that is not `LABEL=STAGE_ID`.
    #[error("{0:?} is not LABEL=STAGE_ID (a label's name, or lost, then the stage's id)")]
    Stage(String),
}

impl CrmOptions {
    /// The options of `pipeline` and `stages` given as `LABEL=STAGE_ID` (`Qualified=
    /// appointmentscheduled`, `lost=closedlost`); a label named twice keeps its last stage.
    pub fn new<'a>(
        pipeline: Option<&str>,
        stages: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, CrmError> {
        let mut mapped = BTreeMap::new();
        for given in stages {
            let parts = given.split_once('=').map(|(l, s)| (l.trim(), s.trim()));
            match parts {
                Some((label, stage)) if !label.is_empty() && !stage.is_empty() => {
                    mapped.insert(label.to_lowercase(), stage.to_owned());
                }
                _ => return Err(CrmError::Stage(given.to_owned())),
            }
        }
        let pipeline = pipeline.map(str::trim).filter(|p| !p.is_empty());
        Ok(Self {
            pipeline: pipeline.map(str::to_owned),
            stages: mapped,
        })
    }

    /// The options as a store keeps them: JSON.
    pub fn to_json(&self) -> String {
        // A map of strings always serialises.
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("CRM options serialise"))
    }

    /// Options a store kept as [`CrmOptions::to_json`]; `None` for text that is not.
    pub fn from_json(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }

    /// The stage mapped to a rating: to its label's name, or to `lost` (`None`).
    pub fn stage(&self, label: Option<&str>) -> Option<&str> {
        let key = label.map_or_else(|| "lost".to_owned(), str::to_lowercase);
        self.stages.get(&key).map(String::as_str)
    }
}

/// What a CRM calls a lead: its contact, its own lead record where the CRM has them
/// (Pipedrive's Leads Inbox), and once rated, its deal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrmRecord {
    /// The contact's (person's) id in the CRM.
    pub contact_id: Option<String>,
    /// The CRM's lead record's id.
    pub crm_lead_id: Option<String>,
    /// The deal's id in the CRM.
    pub deal_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_mapped_by_label_name_and_lost() {
        let options = CrmOptions::new(
            Some(" 75e28846 "),
            ["Qualified=appointmentscheduled", " customer = closedwon "],
        )
        .unwrap();
        assert_eq!(options.pipeline.as_deref(), Some("75e28846"));
        let stage = |label| options.stage(label);
        assert_eq!(stage(Some("QUALIFIED")), Some("appointmentscheduled"));
        assert_eq!(stage(Some("Customer")), Some("closedwon"));
        assert_eq!((stage(Some("Spam check")), stage(None)), (None, None));
        let lost = CrmOptions::new(None, ["lost=lost_stage"]).unwrap();
        assert_eq!(
            (lost.pipeline.as_deref(), lost.stage(None)),
            (None, Some("lost_stage"))
        );
        for bad in ["Qualified", "=x", "Qualified="] {
            assert_eq!(
                CrmOptions::new(None, [bad]),
                Err(CrmError::Stage(bad.to_owned()))
            );
        }
        let json = serde_json::to_string(&options).unwrap();
        assert_eq!(serde_json::from_str::<CrmOptions>(&json).unwrap(), options);
    }
}
