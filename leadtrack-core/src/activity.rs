//! A lead's history: what happened to it, when, and by whom. Stores record an event in the
//! same transaction as the change it describes, so the history never misses one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::account::Actor;
use crate::types::{AttemptOutcome, ConversionId, IntegrationKind, JobId};

/// One event of a lead's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeadEvent {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who did it; `None` for what the service did by itself (a form submission, a
    /// delivery).
    pub by: Option<Actor>,
    /// What happened.
    pub activity: Activity,
}

/// What happened to a lead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Activity {
    /// The lead was created.
    Created,
    /// A submission with the lead's `uniqueEventId` was merged into it.
    Merged,
    /// The lead was rated with a label or `lost`, queueing a conversion job.
    Rated {
        /// The label's id or `lost`.
        conversion_id: ConversionId,
        /// The label's name at the time; `None` for `lost`.
        label: Option<String>,
        /// The price reported, in cents.
        price: Option<i64>,
        /// The note given with the rating.
        note: Option<String>,
        /// The job queued.
        job_id: JobId,
    },
    /// The lead was reset to `open`.
    Reopened {
        /// The price given with the reset, in cents.
        price: Option<i64>,
        /// The note given with the reset.
        note: Option<String>,
    },
    /// A delivery attempt of a conversion job ended.
    Delivery {
        /// The job.
        job_id: JobId,
        /// The platform.
        integration: IntegrationKind,
        /// How the attempt ended.
        outcome: AttemptOutcome,
        /// The platform's HTTP status, when it answered.
        http_status: Option<u16>,
        /// What went wrong, briefly.
        error: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn activities_are_tagged_by_type_with_camel_case_fields() {
        let rated = Activity::Rated {
            conversion_id: ConversionId::Lost,
            label: None,
            price: Some(500),
            note: None,
            job_id: JobId(7),
        };
        assert_eq!(
            serde_json::to_value(&rated).unwrap(),
            json!({"type": "rated", "conversionId": "lost", "label": null, "price": 500, "note": null, "jobId": 7})
        );
        assert_eq!(
            serde_json::to_value(Activity::Merged).unwrap(),
            json!({"type": "merged"})
        );
    }
}
