//! Leads: create with deduplication, and lookup.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use leadtrack_core::account::Actor;
use leadtrack_core::activity::EventRow;
use leadtrack_core::import::ImportCounts;
use leadtrack_core::lead::{self, CreatedLead, LeadData, LeadKeys, StoredLead};
use leadtrack_core::request::CreateRoute;
use leadtrack_core::spam::SpamReason;
use leadtrack_core::store::arrival::{self, Arrival, Merge, Step, route_name};
use leadtrack_core::store::correction::ContactCorrection;
use leadtrack_core::store::sql;
use leadtrack_core::store::{Entity, LeadRow, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, LeadStatus, ProjectId};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::rows::{self, all, one, run};
use crate::{Error, activity, alerts, assignment, webhooks};

/// Creates a lead, or merges into the project's lead with the same event id that `route`
/// may merge into ([`LeadStore::create_lead_via`]), as core's [`arrival`] plans it: the
/// row, then each step (history, the original of a duplicate, alert, round-robin, webhooks);
/// with whether it queued a webhook event.
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
    loop {
        if let Some(merge) = merge_into(c, project, route, &row.data).await? {
            update(c, project, merge.lead, &merge.row, now).await?;
            let lead = (merge.lead, merge.row.data.form_name());
            let queued = apply(c, project, lead, &merge.steps(), now).await?;
            return Ok((merge.outcome(), queued));
        }
        let duplicate_of = match Arrival::looks_for_original(spam) {
            true => duplicate_of(c, project, &row.keys, now).await?,
            false => None,
        };
        let arrival = Arrival {
            route,
            spam,
            duplicate_of,
        };
        // Nothing to merge into: insert, unless a concurrent create got there first; then
        // look again.
        match insert(c, project, &arrival, row, now).await? {
            Some(id) => {
                let steps = arrival.steps();
                let queued = apply(c, project, (id, row.data.form_name()), &steps, now).await?;
                return Ok((arrival.outcome(id, row), queued));
            }
            // Without an event id there is no unique index to meet.
            None if row.data.unique_event_id().is_none() => {
                return Err(StoreError::Invalid("the lead was not inserted".to_owned()).into());
            }
            None => {}
        }
    }
}

/// [`leadtrack_core::LeadStore::correct_contact`], as core's [`correction`] plans it: the
/// row (locked), its matching with the person's earlier leads, then each step; whether a
/// webhook event was queued, when it changed anything.
///
/// [`correction`]: leadtrack_core::store::correction
pub(crate) async fn correct_contact(
    c: &impl GenericClient,
    (project, lead): (ProjectId, LeadId),
    correction: &ContactCorrection,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Option<bool>, Error> {
    if let Some(problem) = correction.problem() {
        return Err(StoreError::Invalid(problem).into());
    }
    let sql = "SELECT data, status, created_at FROM leads
               WHERE project_id = $1 AND id = $2 FOR UPDATE";
    let Some(found) = one(c, sql, &[&project.0, &lead.0]).await? else {
        return Err(StoreError::NotFound(Entity::Lead).into());
    };
    let status: LeadStatus = rows::parse("status", found.try_get::<_, String>(1)?)?;
    let stored: &str = found.try_get(0)?;
    let Some(planned) = correction.plan(lead, (stored, status), by)? else {
        return Ok(None);
    };
    update(c, project, lead, &planned.row, now).await?;
    let mut steps = planned.steps();
    if planned.rematches() {
        let created_at: i64 = found.try_get(2)?;
        let since = to_millis(&lead::duplicate_window_start(from_millis(created_at)));
        let mut original: Option<i64> = None;
        for (column, key) in planned.row.keys.person_keys() {
            let sql = sql::rematch_lookup(column, ["$1", "$2", "$3", "$4"]);
            if let Some(row) = one(c, &sql, &[&project.0, &key, &lead.0, &since]).await? {
                original = Some(row.try_get(0)?);
                break;
            }
        }
        let sql = "UPDATE leads SET duplicate_of = $3 WHERE project_id = $1 AND id = $2";
        run(c, sql, &[&project.0, &lead.0, &original]).await?;
        steps.extend(original.map(|id| Step::MarkDuplicated(LeadId(id))));
    }
    let form = planned.row.data.form_name();
    Ok(Some(apply(c, project, (lead, form), &steps, now).await?))
}

/// [`sql::merge_lookup`] with this backend's placeholders, locking the lead, written once.
static MERGE_LOOKUP: LazyLock<String> =
    LazyLock::new(|| format!("{} FOR UPDATE", sql::merge_lookup(["$1", "$2", "$3"])));

/// The merge of `incoming` into the project's lead with its event id that `route` may
/// merge into ([`sql::merge_lookup`]), locked, if there is one.
async fn merge_into(
    c: &impl GenericClient,
    project: ProjectId,
    route: CreateRoute,
    incoming: &LeadData,
) -> Result<Option<Merge>, Error> {
    let Some(event_id) = incoming.unique_event_id() else {
        return Ok(None);
    };
    let existing = one(
        c,
        &MERGE_LOOKUP,
        &[&project.0, &event_id, &route_name(route)],
    )
    .await?;
    let Some(existing) = existing else {
        return Ok(None);
    };
    let id = LeadId(existing.try_get(0)?);
    let status: LeadStatus = rows::parse("status", existing.try_get::<_, String>(2)?)?;
    let stored: &str = existing.try_get(1)?;
    let merge = Merge::plan(id, (stored, status), incoming.clone())?;
    Ok(Some(merge))
}

/// Writes `steps` of `lead` (its id and form), in the order core's [`arrival`] plan gives;
/// whether a webhook event was queued.
pub(crate) async fn apply(
    c: &impl GenericClient,
    project: ProjectId,
    (lead, form): (LeadId, Option<&str>),
    steps: &[Step],
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let mut queued = false;
    for step in steps {
        match step {
            Step::MarkDuplicated(original) => {
                // An original marked already is left alone: no new row version, and no
                // lock for the next duplicate of the same person to wait on.
                let sql = "UPDATE leads SET duplicated = true
                           WHERE project_id = $1 AND id = $2 AND NOT duplicated";
                run(c, sql, &[&project.0, &original.0]).await?;
            }
            Step::Record { activity, by } => {
                let event = EventRow::of((project, lead), now, by.as_ref(), activity)?;
                activity::record(c, &event).await?;
            }
            Step::ForgetCreation => activity::forget_creation(c, project, lead).await?,
            Step::Alert(kind) => alerts::enqueue(c, (project, lead), *kind, now).await?,
            Step::AssignInTurn => assignment::in_turn(c, (project, lead), form, now).await?,
            Step::Announce(event) => {
                let id = Uuid::new_v4();
                queued |= webhooks::enqueue(c, project, lead, *event, id, None, now).await?;
            }
        }
    }
    Ok(queued)
}

/// Imports a batch of leads, each created when it says, into `project`; a row that repeats
/// a lead already there (or a row before it) is left out, by core's
/// [`sql::import_duplicate`] and [`sql::import_written`]. The batch is written with a few
/// statements, not a few a row: one lookup of the repeats, then an insert of up to
/// [`INSERT_ROWS`] leads (with their `created` events) at a time, whose counts and search
/// entries the statement's trigger writes once. In the caller's transaction.
pub(crate) async fn import(
    c: &impl GenericClient,
    project: ProjectId,
    rows: &[(LeadRow, DateTime<Utc>)],
) -> Result<ImportCounts, Error> {
    crate::admin::project(c, project).await?;
    let held = held(c, project, rows).await?;
    let written = sql::import_written(rows, &held);
    let fresh: Vec<_> = rows
        .iter()
        .zip(written)
        .filter(|(_, w)| *w)
        .map(|(row, _)| row)
        .collect();
    let mut imported = 0;
    for chunk in fresh.chunks(INSERT_ROWS) {
        imported += insert_imported(c, project, chunk).await?;
    }
    let total = u64::try_from(rows.len()).unwrap_or(u64::MAX);
    Ok(ImportCounts {
        imported,
        duplicates: total - imported,
    })
}

/// Brings the planner's statistics of `leads` up to date when they know of fewer leads
/// than were just written (by an import, or counted by the counter after creates).
/// Without statistics (a new database) the planner takes any index led by the project for
/// the foreign-key checks of the leads' events (`leads_conversion`, whose `id` comes last),
/// each check then reads all the project's leads, and a 100,000-row import into a new
/// database took minutes, not seconds. One `ANALYZE` after the first batch mends the plans:
/// it invalidates the cached ones.
pub(crate) async fn analyze_if_unknown(c: &impl GenericClient, written: u64) -> Result<(), Error> {
    let known = one(
        c,
        "SELECT reltuples FROM pg_class WHERE oid = 'leads'::regclass",
        &[],
    )
    .await?
    .map_or(Ok(-1.0), |row| row.try_get::<_, f32>(0))?;
    if written > 0 && f64::from(known) < written as f64 {
        c.batch_execute("ANALYZE leads").await?;
    }
    Ok(())
}

/// The most leads one insert writes: a statement takes at most 65,535 values.
const INSERT_ROWS: usize = 500;

/// Which of `rows` repeat a lead the project already holds ([`sql::import_duplicate`]).
async fn held(
    c: &impl GenericClient,
    project: ProjectId,
    rows: &[(LeadRow, DateTime<Utc>)],
) -> Result<Vec<bool>, Error> {
    let event_ids: Vec<_> = rows
        .iter()
        .map(|(row, _)| row.data.unique_event_id())
        .collect();
    let emails: Vec<_> = rows
        .iter()
        .map(|(row, _)| row.keys.email.as_deref())
        .collect();
    let times: Vec<_> = rows.iter().map(|(_, at)| to_millis(at)).collect();
    let repeats = sql::import_duplicate(["$1", "t.event_id", "t.email", "t.at"]);
    let sql = format!(
        "SELECT t.i FROM unnest($2::text[], $3::text[], $4::bigint[])
             WITH ORDINALITY AS t (event_id, email, at, i)
         WHERE EXISTS ({repeats})"
    );
    let mut held = vec![false; rows.len()];
    for found in all(c, &sql, &[&project.0, &event_ids, &emails, &times]).await? {
        let ordinal: i64 = found.try_get(0)?;
        if let Some(row) = usize::try_from(ordinal - 1)
            .ok()
            .and_then(|i| held.get_mut(i))
        {
            *row = true;
        }
    }
    Ok(held)
}

/// Inserts imported leads, each created when it says (its history's `created` is implied by
/// its row); how many it inserted (a lead whose event id a concurrent create took is left
/// out).
async fn insert_imported(
    c: &impl GenericClient,
    project: ProjectId,
    rows: &[&(LeadRow, DateTime<Utc>)],
) -> Result<u64, Error> {
    let arrival = Arrival::imported();
    let new: Vec<_> = rows
        .iter()
        .map(|(row, at)| NewRow::of(row, &arrival, *at))
        .collect();
    let mut values: Vec<&(dyn ToSql + Sync)> = Vec::new();
    for (new, (row, _)) in new.iter().zip(rows) {
        values.extend(new.values(row, &project.0));
    }
    let width = values.len() / rows.len().max(1);
    let sql = format!(
        "INSERT INTO leads ({}) VALUES {} {ON_EVENT_ID_TAKEN}",
        NewRow::columns(),
        placeholders(1, width, rows.len()),
    );
    // Not a cached statement: its text differs with the number of rows.
    Ok(c.execute(&sql, &values).await?)
}

/// The columns a lead's row sets from its data, in the order of [`row_values`].
const ROW_COLUMNS: [&str; 31] = [
    "data",
    "form_name",
    "first_name",
    "last_name",
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
    "has_gbraid",
    "has_ttclid",
    "has_rdt_cid",
    "has_sccid",
    "has_epik",
    "has_twclid",
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
    fields: &'a [Option<&'a str>; 4],
) -> Vec<&'a (dyn ToSql + Sync)> {
    let keys = &row.keys;
    let [a, b, c, d, e, f] = &row.touches;
    vec![
        &row.json,
        &fields[0],
        &fields[1],
        &fields[2],
        &row.data.unique_identifier,
        &fields[3],
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
        &keys.has_gbraid,
        &keys.has_ttclid,
        &keys.has_rdt_cid,
        &keys.has_sccid,
        &keys.has_epik,
        &keys.has_twclid,
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

/// The fields of `data` that have columns of their own: form name, first and last name
/// (sorted by), and the event id.
fn fields(data: &LeadData) -> [Option<&str>; 4] {
    [
        data.form_name(),
        data.user("firstName"),
        data.user("lastName"),
        data.unique_event_id(),
    ]
}

/// The lead a new lead with `keys` duplicates, by core's [`sql::duplicate_lookup`].
async fn duplicate_of(
    c: &impl GenericClient,
    project: ProjectId,
    keys: &LeadKeys,
    now: DateTime<Utc>,
) -> Result<Option<LeadId>, Error> {
    let since = to_millis(&lead::duplicate_window_start(now));
    for (column, key) in keys.person_keys() {
        let sql = sql::duplicate_lookup(column, ["$1", "$2", "$3"]);
        if let Some(row) = one(c, &sql, &[&project.0, &key, &since]).await? {
            return Ok(Some(LeadId(row.try_get(0)?)));
        }
    }
    Ok(None)
}

/// The values of a new lead's row that [`row_values`] leaves out, kept for as long as the
/// statement that writes them.
struct NewRow<'a> {
    fields: [Option<&'a str>; 4],
    now: i64,
    status: &'static str,
    via: &'static str,
    reason: Option<&'static str>,
    duplicate_of: Option<i64>,
}

impl<'a> NewRow<'a> {
    /// The columns of a new lead's row, in the order of [`NewRow::values`].
    fn columns() -> String {
        let columns = ROW_COLUMNS.join(", ");
        format!("{columns}, status, created_at, created_via, spam_reason, duplicate_of")
    }

    /// The rest of the new row of `row`, arriving by `arrival` at `now`.
    fn of(row: &'a LeadRow, arrival: &Arrival, now: DateTime<Utc>) -> Self {
        Self {
            fields: fields(&row.data),
            now: to_millis(&now),
            status: arrival.status().into(),
            via: arrival.created_via(),
            reason: arrival.spam.map(<&str>::from),
            duplicate_of: arrival.duplicate_of.map(|lead| lead.0),
        }
    }

    /// The values of [`NewRow::columns`] for `row` in `project`.
    fn values(&'a self, row: &'a LeadRow, project: &'a i64) -> Vec<&'a (dyn ToSql + Sync)> {
        let mut values = row_values(row, project, &self.now, &self.fields);
        values.extend([
            &self.status as &(dyn ToSql + Sync),
            &self.now,
            &self.via,
            &self.reason,
            &self.duplicate_of,
        ]);
        values
    }
}

/// What an insert does when the lead's event id and route are taken: nothing.
const ON_EVENT_ID_TAKEN: &str = "ON CONFLICT (project_id, unique_event_id, created_via)
    WHERE unique_event_id IS NOT NULL DO NOTHING";

/// `count` rows of `width` placeholders each, numbered from `$first`.
fn placeholders(first: usize, width: usize, count: usize) -> String {
    (0..count)
        .map(|row| {
            let start = first + row * width;
            let row = (start..start + width).map(|n| format!("${n}"));
            format!("({})", row.collect::<Vec<_>>().join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
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
    let new = NewRow::of(row, arrival, now);
    let values = new.values(row, &project.0);
    let sql = format!(
        "INSERT INTO leads ({}) VALUES {} {ON_EVENT_ID_TAKEN} RETURNING id",
        NewRow::columns(),
        placeholders(1, values.len(), 1),
    );
    Ok(match one(c, &sql, &values).await? {
        Some(inserted) => Some(LeadId(inserted.try_get(0)?)),
        None => None,
    })
}

/// Rewrites the row of lead `id` from merged data.
pub(crate) async fn update(
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
    let steps = arrival::held_steps(by);
    for lead in &held {
        apply(c, project, (*lead, None), &steps, now).await?;
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
    let steps = arrival::released_steps(by);
    apply(c, project, (lead.id, lead.data.form_name()), &steps, now).await?;
    Ok(())
}
