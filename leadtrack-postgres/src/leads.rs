//! Leads: create with deduplication, and lookup.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::alert::AlertKind;
use leadtrack_core::import::ImportCounts;
use leadtrack_core::lead::{self, CreatedLead, LeadData, LeadKeys, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::CreateRoute;
use leadtrack_core::spam::SpamReason;
use leadtrack_core::store::sql::{self, NOT_SPAM};
use leadtrack_core::store::{Entity, LeadRow, StoreError};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use leadtrack_core::webhook::WebhookEvent;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::rows::{self, LEAD_COLUMNS, all, one, run};
use crate::{Error, activity, alerts, assignment, webhooks};

/// Creates a lead, or merges into the project's lead with the same event id that `route`
/// may merge into ([`LeadStore::create_lead_via`]), and records `created` or `merged` in its
/// history, and queues `lead.created` or `lead.updated` for the webhooks that hear of it;
/// with whether it queued one.
///
/// Concurrent creates with one event id make one lead: the lead to merge into is locked
/// (`FOR UPDATE`), and an insert that meets the unique index on
/// `(project_id, unique_event_id, created_via)` (`ON CONFLICT DO NOTHING`: it waits for the
/// other insert to commit) looks again, and merges into the lead the other one made.
///
/// [`LeadStore::create_lead_via`]: leadtrack_core::LeadStore::create_lead_via
pub(crate) async fn create(
    c: &impl GenericClient,
    project: ProjectId,
    (route, spam): (CreateRoute, Option<SpamReason>),
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<(CreatedLead, bool), Error> {
    // A spam lead is nobody's original, and is announced only once a person frees it.
    let duplicate_of = match spam {
        None => duplicate_of(c, project, &row.keys, now).await?,
        Some(_) => None,
    };
    let arrival = Arrival {
        route,
        spam,
        duplicate_of,
    };
    if let Some(original) = duplicate_of {
        // Its original learns it has a duplicate, so that rating it reads the person's jobs.
        run(
            c,
            "UPDATE leads SET duplicated = true WHERE project_id = $1 AND id = $2",
            &[&project.0, &original],
        )
        .await?;
    }
    let Some(event_id) = row.data.unique_event_id() else {
        // Without an event id there is no unique index to meet: the insert always inserts.
        let id = insert(c, project, &arrival, row, now)
            .await?
            .ok_or_else(|| StoreError::Invalid("the lead was not inserted".to_owned()))?;
        return created(c, project, (id, spam), row, now).await;
    };
    loop {
        // A browser create sees only browser leads; a server create prefers its own
        // route's lead ('server' sorts after 'browser').
        let existing = one(
            c,
            "SELECT id, data FROM leads
             WHERE project_id = $1 AND unique_event_id = $2
               AND ($3 = 'server' OR created_via = 'browser')
             ORDER BY created_via DESC LIMIT 1
             FOR UPDATE",
            &[&project.0, &event_id, &route_name(route)],
        )
        .await?;
        if let Some(existing) = existing {
            let id = LeadId(existing.try_get(0)?);
            let mut merged: LeadData = serde_json::from_str(existing.try_get(1)?)?;
            merged.merge(row.data.clone());
            let merged = LeadRow::of(merged)?;
            update(c, project, id, &merged, now).await?;
            let event = EventRow::of((project, id), now, None, &Activity::Merged)?;
            activity::record(c, &event).await?;
            let event = WebhookEvent::LeadUpdated;
            let queued =
                webhooks::enqueue(c, project, id, event, Uuid::new_v4(), None, now).await?;
            let merged = CreatedLead {
                lead_id: id,
                unique_identifier: merged.data.unique_identifier,
                created: false,
            };
            return Ok((merged, queued));
        }
        // Nothing to merge into: insert, unless a concurrent create got there first; then
        // look again.
        if let Some(id) = insert(c, project, &arrival, row, now).await? {
            return created(c, project, (id, spam), row, now).await;
        }
    }
}

/// [`leadtrack_core::LeadStore::import_leads`], in the caller's transaction.
pub(crate) async fn import(
    c: &impl GenericClient,
    project: ProjectId,
    rows: &[(LeadRow, DateTime<Utc>)],
) -> Result<ImportCounts, Error> {
    crate::admin::project(c, project).await?;
    let mut counts = ImportCounts::default();
    let repeats = sql::import_duplicate(["$1", "$2", "$3", "$4"]);
    let arrival = Arrival {
        route: CreateRoute::Server,
        spam: None,
        duplicate_of: None,
    };
    for (row, created_at) in rows {
        let (event_id, at) = (row.data.unique_event_id(), to_millis(created_at));
        let params: [&(dyn ToSql + Sync); 4] = [&project.0, &event_id, &row.keys.email, &at];
        if one(c, &repeats, &params).await?.is_some() {
            counts.duplicates += 1;
            continue;
        }
        let id = insert(c, project, &arrival, row, *created_at)
            .await?
            .ok_or_else(|| StoreError::Invalid("the lead was not inserted".to_owned()))?;
        let event = EventRow::of((project, id), *created_at, None, &Activity::Created)?;
        activity::record(c, &event).await?;
        counts.imported += 1;
    }
    Ok(counts)
}

/// What a create that inserted `id` answers, after recording it in the lead's history and
/// queueing `lead.created` unless it is `spam`, and whether that queued an event.
async fn created(
    c: &impl GenericClient,
    project: ProjectId,
    (id, spam): (LeadId, Option<SpamReason>),
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<(CreatedLead, bool), Error> {
    let event = EventRow::of((project, id), now, None, &Activity::Created)?;
    activity::record(c, &event).await?;
    let queued = match spam {
        None => {
            alerts::enqueue(c, (project, id), AlertKind::NewLead, now).await?;
            assignment::in_turn(c, (project, id), row.data.form_name(), now).await?;
            let event = WebhookEvent::LeadCreated;
            webhooks::enqueue(c, project, id, event, Uuid::new_v4(), None, now).await?
        }
        Some(_) => false,
    };
    let created = CreatedLead {
        lead_id: id,
        unique_identifier: row.data.unique_identifier.clone(),
        created: true,
    };
    Ok((created, queued))
}

/// The `leads.created_via` value of a route.
fn route_name(route: CreateRoute) -> &'static str {
    match route {
        CreateRoute::Browser => "browser",
        CreateRoute::Server => "server",
    }
}

/// The columns a lead's row sets from its data, in the order of [`row_values`].
const ROW_COLUMNS: [&str; 28] = [
    "data",
    "form_name",
    "first_name",
    "last_name",
    "email",
    "phone",
    "company_name",
    "unique_identifier",
    "unique_event_id",
    "email_key",
    "phone_key",
    "search_text",
    "q_text",
    "form_key",
    "has_gclid",
    "has_cid",
    "has_fbp",
    "has_fbc",
    "has_msclkid",
    "has_li_fat_id",
    "first_source",
    "first_medium",
    "first_campaign",
    "last_source",
    "last_medium",
    "last_campaign",
    "updated_at",
    "project_id",
];

/// The values of [`ROW_COLUMNS`] for `row`, written at `now` (milliseconds) in `project`.
fn row_values<'a>(
    row: &'a LeadRow,
    project: &'a i64,
    now: &'a i64,
    fields: &'a [Option<&'a str>; 7],
) -> Vec<&'a (dyn ToSql + Sync)> {
    let keys = &row.keys;
    let [a, b, c, d, e, f] = &row.touches;
    vec![
        &row.json,
        &fields[0],
        &fields[1],
        &fields[2],
        &fields[3],
        &fields[4],
        &fields[5],
        &row.data.unique_identifier,
        &fields[6],
        &keys.email,
        &keys.phone,
        &row.search_text,
        &row.q_text,
        &row.form_key,
        &keys.has_gclid,
        &keys.has_cid,
        &keys.has_fbp,
        &keys.has_fbc,
        &keys.has_msclkid,
        &keys.has_li_fat_id,
        a,
        b,
        c,
        d,
        e,
        f,
        now,
        project,
    ]
}

/// The fields of `data` that have columns of their own: form name, first and last name,
/// email, phone, company, and the event id.
fn fields(data: &LeadData) -> [Option<&str>; 7] {
    [
        data.form_name(),
        data.user("firstName"),
        data.user("lastName"),
        data.user("email"),
        data.user("phone"),
        data.user("companyName"),
        data.unique_event_id(),
    ]
}

/// How a new lead arrived: its route, why it is spam (if it is), and the lead it
/// duplicates (if any).
struct Arrival {
    route: CreateRoute,
    spam: Option<SpamReason>,
    duplicate_of: Option<i64>,
}

/// The lead a new lead with `keys` duplicates, by core's [`sql::duplicate_lookup`].
async fn duplicate_of(
    c: &impl GenericClient,
    project: ProjectId,
    keys: &LeadKeys,
    now: DateTime<Utc>,
) -> Result<Option<i64>, Error> {
    let since = to_millis(&lead::duplicate_window_start(now));
    for (column, key) in keys.person_keys() {
        let sql = sql::duplicate_lookup(column, ["$1", "$2", "$3"]);
        if let Some(row) = one(c, &sql, &[&project.0, &key, &since]).await? {
            return Ok(Some(row.try_get(0)?));
        }
    }
    Ok(None)
}

/// Inserts a new lead; `None` when its event id and route are taken (by a concurrent
/// create).
async fn insert(
    c: &impl GenericClient,
    project: ProjectId,
    arrival: &Arrival,
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<Option<LeadId>, Error> {
    let now = to_millis(&now);
    let fields = fields(&row.data);
    let mut values = row_values(row, &project.0, &now, &fields);
    let status = match arrival.spam {
        Some(_) => LeadStatus::Spam.as_ref(),
        None => LeadStatus::Open.as_ref(),
    };
    let via = route_name(arrival.route);
    let reason = arrival.spam.map(<&str>::from);
    values.extend([
        &status as &(dyn ToSql + Sync),
        &now,
        &via,
        &reason,
        &arrival.duplicate_of,
    ]);
    let columns = ROW_COLUMNS.join(", ");
    let placeholders = (1..=values.len())
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO leads ({columns}, status, created_at, created_via, spam_reason,
            duplicate_of)
         VALUES ({placeholders})
         ON CONFLICT (project_id, unique_event_id, created_via)
             WHERE unique_event_id IS NOT NULL DO NOTHING
         RETURNING id"
    );
    Ok(match one(c, &sql, &values).await? {
        Some(inserted) => Some(LeadId(inserted.try_get(0)?)),
        None => None,
    })
}

/// Rewrites the row of lead `id` from merged data.
async fn update(
    c: &impl GenericClient,
    project: ProjectId,
    id: LeadId,
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let now = to_millis(&now);
    let fields = fields(&row.data);
    let mut values = row_values(row, &project.0, &now, &fields);
    values.push(&id.0);
    // Every column but `project_id` (the last), which names the row with the id.
    let assignments = ROW_COLUMNS[..ROW_COLUMNS.len() - 1]
        .iter()
        .enumerate()
        .map(|(at, column)| format!("{column} = ${}", at + 1))
        .collect::<Vec<_>>()
        .join(", ");
    let (project_at, id_at) = (ROW_COLUMNS.len(), ROW_COLUMNS.len() + 1);
    let sql = format!(
        "UPDATE leads SET {assignments} WHERE project_id = ${project_at} AND id = ${id_at}"
    );
    run(c, &sql, &values).await?;
    Ok(())
}

fn lead_not_found() -> Error {
    Error::Store(StoreError::NotFound(Entity::Lead))
}

/// Finds a lead of the project by id, or the newest match of another identifier,
/// preferring a lead that is not spam to a newer spam one.
/// Fills `column`, derived from a lead's data by `value`, for the leads stored before a
/// migration added it, a thousand at a time, in the migration's transaction.
pub(crate) async fn backfill(
    c: &impl GenericClient,
    column: &str,
    value: fn(&LeadData) -> Option<String>,
) -> Result<(), Error> {
    let (mut project, mut after) = (0_i64, 0_i64);
    let update = format!("UPDATE leads SET {column} = $3 WHERE project_id = $1 AND id = $2");
    loop {
        let batch = all(
            c,
            "SELECT project_id, id, data FROM leads WHERE (project_id, id) > ($1, $2)
             ORDER BY project_id, id LIMIT 1000",
            &[&project, &after],
        )
        .await?;
        let Some(last) = batch.last() else {
            return Ok(());
        };
        (project, after) = (last.try_get(0)?, last.try_get(1)?);
        for row in &batch {
            let data: LeadData = serde_json::from_str(row.try_get::<_, &str>(2)?)?;
            let key: (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            if let Some(value) = value(&data) {
                run(c, &update, &[&key.0, &key.1, &value]).await?;
            }
        }
    }
}

pub(crate) async fn find(
    c: &impl GenericClient,
    project: ProjectId,
    identifier: &LeadIdentifier,
) -> Result<StoredLead, Error> {
    let (column, key) = match identifier {
        LeadIdentifier::LeadId(id) => {
            let found = one(c, &find_sql("id", "true"), &[&project.0, &id.0]).await?;
            return rows::lead(&found.ok_or_else(lead_not_found)?);
        }
        LeadIdentifier::UniqueIdentifier(value) => ("unique_identifier", Some(value.clone())),
        LeadIdentifier::Email(email) => ("email_key", matching::email_key(email)),
        LeadIdentifier::Phone(phone) => ("phone_key", matching::phone_key(phone)),
    };
    let key = key.ok_or_else(lead_not_found)?;
    for condition in [NOT_SPAM, "true"] {
        if let Some(found) = one(c, &find_sql(column, condition), &[&project.0, &key]).await? {
            return rows::lead(&found);
        }
    }
    Err(lead_not_found())
}

/// The lookup of [`find`] by `column`: the newest lead of the project with the value that
/// meets `condition`.
fn find_sql(column: &str, condition: &str) -> String {
    format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE project_id = $1 AND {column} = $2
           AND {condition}
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

/// Holds each of `leads` that is open as spam, marked by `by` ([`LeadStore::mark_spam`]).
///
/// [`LeadStore::mark_spam`]: leadtrack_core::LeadStore::mark_spam
pub(crate) async fn mark_spam(
    c: &impl GenericClient,
    project: ProjectId,
    leads: &[LeadId],
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<LeadId>, Error> {
    let reason = SpamReason::Marked;
    let ids: Vec<i64> = leads.iter().map(|lead| lead.0).collect();
    // One statement for all of them; the leads held come back in id order.
    let held = all(
        c,
        "UPDATE leads SET status = 'spam', spam_reason = $3, updated_at = $4
         WHERE project_id = $1 AND id = ANY($2) AND status = 'open'
         RETURNING id",
        &[&project.0, &ids, &reason.as_ref(), &to_millis(&now)],
    )
    .await?;
    let mut held: Vec<LeadId> = held
        .iter()
        .map(|row| row.try_get(0).map(LeadId))
        .collect::<Result<_, _>>()?;
    held.sort_unstable_by_key(|lead| lead.0);
    for lead in &held {
        let event = EventRow::of((project, *lead), now, Some(by), &Activity::Spam { reason })?;
        activity::record(c, &event).await?;
    }
    Ok(held)
}

/// Takes a spam `lead` out of spam before a person's status change: its reason goes, its
/// history gains `not_spam`, and the webhooks hear `lead.created` at last (the workers'
/// poll finds the event: a person's click needs no notification's haste).
pub(crate) async fn release_spam(
    c: &impl GenericClient,
    project: ProjectId,
    lead: &StoredLead,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    run(
        c,
        "UPDATE leads SET status = 'open', spam_reason = NULL WHERE id = $1",
        &[&lead.id.0],
    )
    .await?;
    let event = EventRow::of((project, lead.id), now, Some(by), &Activity::NotSpam)?;
    activity::record(c, &event).await?;
    alerts::enqueue(c, (project, lead.id), AlertKind::NewLead, now).await?;
    assignment::in_turn(c, (project, lead.id), lead.data.form_name(), now).await?;
    let event = WebhookEvent::LeadCreated;
    webhooks::enqueue(c, project, lead.id, event, Uuid::new_v4(), None, now).await?;
    Ok(())
}
