//! Rating several leads at once. The form's leads share one one-time token, so a reload or a
//! second click rates none twice, and one Undo takes the whole batch back while it waits out
//! the undo window. What the rating did travels to the inbox in the `303`'s query, as ids
//! and codes only: the page says it in its own words.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use leadtrack_core::Store;
use leadtrack_core::types::{LeadId, LeadIdentifier};
use uuid::Uuid;
use warp::http::StatusCode;

use crate::rating::BulkResult;
use crate::rating::Refusal;
use crate::rating::{Held, Rated, display_name};

/// What a bulk rating did: the leads rated, those refused and why, those the form had
/// rated already, the form's token, and when its window ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) token: Uuid,
    pub(crate) rated: usize,
    pub(crate) already: usize,
    /// Kept as drafts, in a project that reviews ratings before sending them.
    pub(crate) drafted: usize,
    pub(crate) refused: Vec<(LeadId, Refusal)>,
    pub(crate) until: DateTime<Utc>,
}

impl Outcome {
    /// A batch through the form with one-time token `token`, whose ratings wait `window`.
    pub(crate) fn new(token: Uuid, window: chrono::Duration) -> Self {
        Self {
            token,
            rated: 0,
            already: 0,
            drafted: 0,
            refused: Vec::new(),
            until: Utc::now() + window,
        }
    }

    /// Counts how the rating of lead `id` went; `Err` with a problem of the form itself
    /// (a bad price), which is the same for every lead.
    pub(crate) fn count(
        &mut self,
        id: LeadId,
        rated: Result<Rated, (StatusCode, String)>,
    ) -> Result<(), String> {
        match rated {
            Ok(Rated::Already) => self.already += 1,
            Ok(_) => self.rated += 1,
            Err((StatusCode::BAD_REQUEST, problem)) => return Err(problem),
            Err((StatusCode::CONFLICT, _)) => self.refused.push((id, Refusal::Pending)),
            Err((StatusCode::NOT_FOUND, _)) => self.refused.push((id, Refusal::Missing)),
            Err(_) => self.refused.push((id, Refusal::Failed)),
        }
        Ok(())
    }

    /// The outcome as query parameters, to follow the inbox view's own.
    pub(crate) fn query(&self) -> String {
        let refused: Vec<String> = self
            .refused
            .iter()
            .map(|(id, why)| format!("{id}.{}", why.as_ref()))
            .collect();
        let mut query = format!(
            "bulk={}&rated={}&already={}&drafted={}&until={}",
            self.token,
            self.rated,
            self.already,
            self.drafted,
            self.until.timestamp_millis()
        );
        if !refused.is_empty() {
            let _ = write!(query, "&refused={}", refused.join(","));
        }
        query
    }

    /// The outcome a query carries, if it carries one; parts that do not parse are left out.
    pub(crate) fn from_query(query: &str) -> Option<Self> {
        let param = |name| crate::query_param(query, name);
        let count = |name| param(name).and_then(|v| v.parse().ok()).unwrap_or(0);
        let refused = param("refused")
            .into_iter()
            .flat_map(|list| list.split(',').map(str::to_owned).collect::<Vec<_>>())
            .filter_map(|item| {
                let (id, why) = item.split_once('.')?;
                Some((LeadId(id.parse().ok()?), why.parse().ok()?))
            })
            .collect();
        let until = param("until")
            .and_then(|ms| ms.parse().ok())
            .and_then(DateTime::from_timestamp_millis)?;
        Some(Self {
            token: param("bulk")?.parse().ok()?,
            rated: count("rated"),
            already: count("already"),
            drafted: count("drafted"),
            refused,
            until,
        })
    }

    /// The banner of the outcome, as seen at `now`: the refused leads by name, and the
    /// batch's Undo while it waits.
    pub(crate) async fn result<S: Store>(
        &self,
        store: &S,
        project: leadtrack_core::ProjectId,
        now: DateTime<Utc>,
    ) -> BulkResult {
        let mut refused = Vec::with_capacity(self.refused.len());
        for (id, why) in &self.refused {
            let found = store.find_lead(project, &LeadIdentifier::LeadId(*id)).await;
            let who = found.map_or_else(
                |_| format!("Lead #{id}"),
                |lead| format!("{} (#{id})", display_name(&lead)),
            );
            refused.push((who, why.sentence().to_owned()));
        }
        let what = match self.rated {
            1 => "1 lead rated".to_owned(),
            n => format!("{n} leads rated"),
        };
        let held = (self.rated > 0)
            .then(|| Held::until(what, self.until, now))
            .flatten();
        let notice = match (self.already, self.drafted) {
            (0, 0) => None,
            (0, 1) => Some(
                "1 rating kept as a draft: nothing is sent until the drafts are sent.".to_owned(),
            ),
            (0, n) => Some(format!(
                "{n} ratings kept as drafts: nothing is sent until the drafts are sent."
            )),
            _ => Some("This rating was already saved.".to_owned()),
        };
        BulkResult {
            rated: self.rated,
            refused,
            notice,
            undo: held.map(|held| (self.token.to_string(), held)),
            ..BulkResult::default()
        }
    }
}

/// The banner after an undo of a batch: how many ratings it took back.
pub(crate) fn undone(count: usize) -> BulkResult {
    let notice = match count {
        0 => "Too late to undo: the ratings have been sent.".to_owned(),
        1 => "1 rating undone. Nothing was sent.".to_owned(),
        n => format!("{n} ratings undone. Nothing was sent."),
    };
    BulkResult {
        notice: Some(notice),
        ..BulkResult::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_survives_its_query_and_nothing_else_gets_in() {
        let outcome = Outcome {
            token: Uuid::new_v4(),
            rated: 2,
            already: 0,
            drafted: 0,
            refused: vec![
                (LeadId(12), Refusal::Pending),
                (LeadId(15), Refusal::Missing),
            ],
            until: DateTime::from_timestamp_millis(1_780_000_000_123).unwrap(),
        };
        let query = format!("tab=open&page=2&{}", outcome.query());
        assert_eq!(Outcome::from_query(&query), Some(outcome.clone()));
        let forged = query.replace("15.missing", "15.<script>,x.pending,16.lies");
        assert_eq!(
            Outcome::from_query(&forged).unwrap().refused,
            [(LeadId(12), Refusal::Pending)]
        );
        assert_eq!(Outcome::from_query("tab=open"), None);
    }
}
