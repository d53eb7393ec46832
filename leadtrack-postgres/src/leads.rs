//! Leads: create with deduplication, and lookup.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::activity::{Activity, EventRow};
use leadtrack_core::lead::{CreatedLead, LeadData, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::request::CreateRoute;
use leadtrack_core::store::{Entity, LeadRow, StoreError};
use leadtrack_core::time::to_millis;
use leadtrack_core::types::{LeadId, LeadIdentifier, LeadStatus, ProjectId};
use leadtrack_core::webhook::WebhookEvent;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::rows::{self, LEAD_COLUMNS, one, run};
use crate::{Error, activity, webhooks};

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
    route: CreateRoute,
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<(CreatedLead, bool), Error> {
    let Some(event_id) = row.data.unique_event_id() else {
        // Without an event id there is no unique index to meet: the insert always inserts.
        let id = insert(c, project, route, row, now)
            .await?
            .ok_or_else(|| StoreError::Invalid("the lead was not inserted".to_owned()))?;
        return created(c, project, id, row, now).await;
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
        if let Some(id) = insert(c, project, route, row, now).await? {
            return created(c, project, id, row, now).await;
        }
    }
}

/// What a create that inserted `id` answers, after recording it in the lead's history and
/// queueing `lead.created`, and whether that queued an event.
async fn created(
    c: &impl GenericClient,
    project: ProjectId,
    id: LeadId,
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<(CreatedLead, bool), Error> {
    let event = EventRow::of((project, id), now, None, &Activity::Created)?;
    activity::record(c, &event).await?;
    let event = WebhookEvent::LeadCreated;
    let queued = webhooks::enqueue(c, project, id, event, Uuid::new_v4(), None, now).await?;
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
const ROW_COLUMNS: [&str; 26] = [
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

/// Inserts a new lead; `None` when its event id and route are taken (by a concurrent
/// create).
async fn insert(
    c: &impl GenericClient,
    project: ProjectId,
    route: CreateRoute,
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<Option<LeadId>, Error> {
    let now = to_millis(&now);
    let fields = fields(&row.data);
    let mut values = row_values(row, &project.0, &now, &fields);
    let status = LeadStatus::Open.as_ref();
    let via = route_name(route);
    values.extend([&status as &(dyn ToSql + Sync), &now, &via]);
    let columns = ROW_COLUMNS.join(", ");
    let placeholders = (1..=values.len())
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO leads ({columns}, status, created_at, created_via) VALUES ({placeholders})
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

/// Finds a lead of the project by id, or the newest match of another identifier.
pub(crate) async fn find(
    c: &impl GenericClient,
    project: ProjectId,
    identifier: &LeadIdentifier,
) -> Result<StoredLead, Error> {
    let found = match identifier {
        LeadIdentifier::LeadId(id) => one(c, &find_sql("id"), &[&project.0, &id.0]).await?,
        LeadIdentifier::UniqueIdentifier(value) => {
            one(c, &find_sql("unique_identifier"), &[&project.0, value]).await?
        }
        LeadIdentifier::Email(email) => match matching::email_key(email) {
            Some(key) => one(c, &find_sql("email_key"), &[&project.0, &key]).await?,
            None => None,
        },
        LeadIdentifier::Phone(phone) => match matching::phone_key(phone) {
            Some(key) => one(c, &find_sql("phone_key"), &[&project.0, &key]).await?,
            None => None,
        },
    };
    rows::lead(&found.ok_or_else(lead_not_found)?)
}

/// The lookup of [`find`] by `column`: the newest lead of the project with the value.
fn find_sql(column: &str) -> String {
    format!(
        "SELECT {LEAD_COLUMNS} FROM leads WHERE project_id = $1 AND {column} = $2
         ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}
