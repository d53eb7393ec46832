//! SQL text that both backends build the same way.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::LeadRow;
use crate::matching::{email_key, phone_key};
use crate::types::LeadIdentifier;

/// The condition of a lead that is not spam: listings that name no status, lookups by a
/// value (which prefer such a lead), reports and duplicates see only these.
pub const NOT_SPAM: &str = "status <> 'spam'";

/// The condition of a lead event that is a rating with a label or `lost`
/// ([`crate::activity::Activity::Rated`], kept as JSON led by its `type`).
pub const RATED_EVENT: &str = "activity LIKE '{\"type\":\"rated\"%'";

/// The lookup of the lead a new lead duplicates ([`crate::lead::StoredLead::duplicate_of`])
/// by `column` (`email_key` or `phone_key`, as [`crate::lead::LeadKeys::person_keys`] gives
/// them), with the backend's placeholders for the project, the key and the start of the
/// window: the original of the project's newest lead, not spam, with the key, in the window.
pub fn duplicate_lookup(column: &str, [project, key, since]: [&str; 3]) -> String {
    format!(
        "SELECT coalesce(duplicate_of, id) FROM leads
         WHERE project_id = {project} AND {column} = {key} AND created_at >= {since}
           AND {NOT_SPAM}
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

/// The lookup of the lead a corrected lead (`lead`) duplicates, with the backend's
/// placeholders for the project, the key in `column`, the lead, and the start of its
/// duplicates' window before its creation (in the backend's time column type): as
/// [`duplicate_lookup`] finds a new lead's, among the leads created before it, never
/// itself nor one of its own duplicates.
pub fn rematch_lookup(column: &str, [project, key, lead, since]: [&str; 4]) -> String {
    format!(
        "SELECT coalesce(duplicate_of, id) FROM leads
         WHERE project_id = {project} AND {column} = {key} AND id <> {lead}
           AND coalesce(duplicate_of, id) <> {lead} AND created_at >= {since}
           AND created_at <= (SELECT created_at FROM leads
                              WHERE project_id = {project} AND id = {lead})
           AND {NOT_SPAM}
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

/// A key a person's leads are found by: a lead id, or a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PersonKey {
    /// A lead's id.
    Id(i64),
    /// A `uniqueIdentifier`, or an email's or a phone's key.
    Text(String),
}

/// The column of the leads `who` names and the key they hold in it: the email and phone
/// keys the duplicates are matched by ([`crate::matching`]), a lead id, or a
/// `uniqueIdentifier`. `None` when the email or phone has no key, which names no lead.
pub fn person_key(who: &LeadIdentifier) -> Option<(&'static str, PersonKey)> {
    Some(match who {
        LeadIdentifier::LeadId(id) => ("id", PersonKey::Id(id.0)),
        LeadIdentifier::UniqueIdentifier(value) => {
            ("unique_identifier", PersonKey::Text(value.clone()))
        }
        LeadIdentifier::Email(email) => ("email_key", PersonKey::Text(email_key(email)?)),
        LeadIdentifier::Phone(phone) => ("phone_key", PersonKey::Text(phone_key(phone)?)),
    })
}

/// The lookup of a person's leads not erased yet ([`crate::store::erasure`]), by the key in
/// `column` ([`person_key`]), with the backend's placeholders for the project, the key and
/// now: each one's id, data and status, and whether a worker is delivering one of its jobs
/// this moment; oldest first.
pub fn person_leads(column: &str, [project, key, now]: [&str; 3]) -> String {
    format!(
        "SELECT l.id, l.data, l.status, {}
         FROM leads l
         WHERE l.project_id = {project} AND l.{column} = {key} AND l.erased_at IS NULL
         ORDER BY l.id",
        delivering(now)
    )
}

/// Whether a worker is delivering one of lead `l`'s jobs at `now` (a placeholder).
fn delivering(now: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM jobs j WHERE j.lead_id = l.id AND j.state = 'running'
                 AND j.lease_expires_at > {now})"
    )
}

/// The lookup of a project's spam older than its spam retention
/// ([`crate::project::Retention`]), oldest first, with the backend's placeholders for the
/// project, the cutoff and how many.
pub fn expired_spam([project, before, limit]: [&str; 3]) -> String {
    format!(
        "SELECT id FROM leads
         WHERE project_id = {project} AND status = 'spam' AND created_at < {before}
         ORDER BY created_at, id LIMIT {limit}"
    )
}

/// The lookup of a project's leads older than its retention and not erased yet, from where
/// the last run left off, oldest first, with the backend's placeholders for the project,
/// that start, the cutoff, now and how many: as [`person_leads`], with each one's creation
/// time.
pub fn expired_leads([project, from, before, now, limit]: [&str; 5]) -> String {
    format!(
        "SELECT l.id, l.data, l.status, {}, l.created_at
         FROM leads l
         WHERE l.project_id = {project} AND l.created_at >= {from} AND l.created_at < {before}
           AND l.erased_at IS NULL AND l.status <> 'spam'
         ORDER BY l.created_at, l.id LIMIT {limit}",
        delivering(now)
    )
}

/// The record of a retention run's batch, with the backend's placeholders for the project,
/// where it left off, now and how many leads it took: batches at the same `now` add up.
pub fn record_retention([project, done_to, now, count]: [&str; 4]) -> String {
    format!(
        "UPDATE projects SET retention_done_to = {done_to},
            retention_erased = CASE WHEN retention_ran_at = {now}
                               THEN retention_erased + {count} ELSE {count} END,
            retention_ran_at = {now}
         WHERE id = {project}"
    )
}

/// What was delivered of a lead before it is erased ([`crate::store::erasure::SentTo`]),
/// with the backend's placeholders for the project and the lead: per integration, its
/// conversions delivered, then the events its lead webhooks received (`lead_webhooks`).
pub fn delivered_of_lead([project, lead]: [&str; 2]) -> String {
    format!(
        "SELECT d.integration, COUNT(*) FROM deliveries d JOIN jobs j ON j.id = d.job_id
         WHERE j.project_id = {project} AND j.lead_id = {lead} AND d.state = 'delivered'
         GROUP BY d.integration
         UNION ALL
         SELECT 'lead_webhooks', COUNT(*) FROM webhook_events
         WHERE lead_id = {lead} AND state = 'delivered'"
    )
}

/// The update that settles a pending lead being erased, with the backend's placeholders
/// for the project and the lead: its conversion is cancelled with its job, so it takes the
/// status that job would have left it in (its rating stands; nothing is sent).
pub fn settle_pending([project, lead]: [&str; 2]) -> String {
    format!(
        "UPDATE leads SET status = (
             SELECT j.final_status FROM jobs j
             WHERE j.project_id = {project} AND j.lead_id = {lead} AND j.finished_at IS NULL
             ORDER BY j.id DESC LIMIT 1)
         WHERE project_id = {project} AND id = {lead} AND status = 'pending'
           AND EXISTS (SELECT 1 FROM jobs j WHERE j.project_id = {project}
                       AND j.lead_id = {lead} AND j.finished_at IS NULL)"
    )
}

/// The deletion of an erased lead's fetch record (a platform's lead form announced it, a
/// fetcher fetched it), with the backend's placeholders for the project and the lead's id
/// at the platform.
pub fn forget_fetch([project, external_id]: [&str; 2]) -> String {
    format!("DELETE FROM lead_fetches WHERE project_id = {project} AND external_id = {external_id}")
}

/// The lookup of the lead a create merges into ([`crate::store::arrival::Merge`]), with the
/// backend's placeholders for the project, the event id and the route's `created_via`
/// ([`crate::store::arrival::route_name`]): its id, data and status. A browser create sees
/// only browser leads, since anyone can read a page's project id; a server create prefers
/// its own route's lead (`server` sorts after `browser`).
pub fn merge_lookup([project, event_id, route]: [&str; 3]) -> String {
    format!(
        "SELECT id, data, status FROM leads
         WHERE project_id = {project} AND unique_event_id = {event_id}
           AND ({route} = 'server' OR created_via = 'browser')
         ORDER BY created_via DESC LIMIT 1"
    )
}

/// The lookup of a lead an imported lead repeats, with the backend's placeholders for the
/// project, the event id, the email key and the creation time (in the backend's time
/// column type): one of the project's leads with the same `uniqueEventId`, or the same
/// email created at the same instant. Importing a file twice adds nothing.
pub fn import_duplicate([project, event_id, email, created]: [&str; 4]) -> String {
    format!(
        "SELECT 1 FROM leads WHERE project_id = {project} AND unique_event_id = {event_id}
         UNION ALL
         SELECT 1 FROM leads
         WHERE project_id = {project} AND email_key = {email} AND created_at = {created}
         LIMIT 1"
    )
}

/// Which of an import's `rows` a backend that writes them all at once writes, given which
/// of them the database already `held` by [`import_duplicate`]: by the same rule, a row is
/// left out when it repeats a row written before it (the same event id, or the same email
/// key at the same millisecond), as if each row had been checked and written in turn.
pub fn import_written(rows: &[(LeadRow, DateTime<Utc>)], held: &[bool]) -> Vec<bool> {
    let mut event_ids = HashSet::new();
    let mut emails = HashSet::new();
    rows.iter()
        .zip(held)
        .map(|((row, created_at), &held)| {
            let event_id = row.data.unique_event_id();
            let email = row
                .keys
                .email
                .as_deref()
                .map(|email| (email, created_at.timestamp_millis()));
            let repeated = held
                || event_id.is_some_and(|id| event_ids.contains(id))
                || email.is_some_and(|key| emails.contains(&key));
            if !repeated {
                event_ids.extend(event_id);
                emails.extend(email);
            }
            !repeated
        })
        .collect()
}

/// A column whose values a filter offers to pick from: the form names, and the first
/// touch's sources, mediums and campaigns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Listed {
    /// `formData.formName`, as sent.
    FormName,
    /// The first touch's source.
    Source,
    /// The first touch's medium.
    Medium,
    /// The first touch's campaign.
    Campaign,
}

impl Listed {
    /// The column of the leads' row, led in an index by the project.
    pub fn column(self) -> &'static str {
        match self {
            Self::FormName => "form_name",
            Self::Source => "first_source",
            Self::Medium => "first_medium",
            Self::Campaign => "first_campaign",
        }
    }
}

/// The distinct values of a [`Listed`] column among a project's leads, in order, at most
/// [`LISTED_VALUES`] of them, with the backend's placeholder for the project: a walk along
/// the `(project_id, column, ...)` index that jumps from one value to the next, so it costs
/// one index probe per value, not one row per lead.
pub fn distinct_values(listed: Listed, project: &str) -> String {
    let column = listed.column();
    format!(
        "WITH RECURSIVE found (value, n) AS (
             SELECT min({column}), 1 FROM leads WHERE project_id = {project}
             UNION ALL
             SELECT (SELECT min({column}) FROM leads
                     WHERE project_id = {project} AND {column} > found.value), n + 1
             FROM found WHERE found.value IS NOT NULL AND n < {LISTED_VALUES}
         )
         SELECT value FROM found WHERE value IS NOT NULL"
    )
}

/// How many values [`distinct_values`] reads at most.
pub const LISTED_VALUES: u32 = 200;

/// `columns` (a list separated by `", "`) each qualified by the table alias `table`, for a
/// select over a join: `qualified("id, name", "p")` is `"p.id, p.name"`.
pub fn qualified(columns: &str, table: &str) -> String {
    columns
        .split(", ")
        .map(|column| format!("{table}.{column}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::qualified;

    #[test]
    fn each_column_takes_the_alias() {
        assert_eq!(
            qualified("id, public_id, name", "p"),
            "p.id, p.public_id, p.name"
        );
        assert_eq!(qualified("id", "m"), "m.id");
    }
}
