//! Leads: create with deduplication, lookup, and the filtered, sorted, paged listing.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use leadtrack_core::account::Actor;
use leadtrack_core::activity::EventRow;
use leadtrack_core::channel;
use leadtrack_core::import::ImportCounts;
use leadtrack_core::lead::{self, CreatedLead, LeadData, LeadKeys, StoredLead};
use leadtrack_core::matching;
use leadtrack_core::report;
use leadtrack_core::request::CreateRoute;
use leadtrack_core::spam::SpamReason;
use leadtrack_core::store::LeadRow;
use leadtrack_core::store::arrival::{self, Arrival, Merge, Step, route_name};
use leadtrack_core::store::correction::ContactCorrection;
use leadtrack_core::store::sql;
use leadtrack_core::store::{Entity, StoreError};
use leadtrack_core::time::{from_millis, to_millis};
use leadtrack_core::types::{LeadId, LeadStatus, ProjectId};
use rusqlite::{Connection, OptionalExtension, ToSql};
use uuid::Uuid;

use crate::rows::{self, Error};
use crate::{activity, alerts, assignment, packed, webhooks};

/// Creates a lead, or merges into the project's lead with the same event id that `route`
/// may merge into ([`LeadStore::create_lead_via`]), as core's [`arrival`] plans it: the
/// row, then each step (history, the original of a duplicate, alert, round-robin, webhooks).
/// Runs in the writer's transaction, so concurrent creates are serialised and the
/// unique index on `(project_id, unique_event_id, created_via)` backs the rule.
///
/// [`LeadStore::create_lead_via`]: leadtrack_core::LeadStore::create_lead_via
pub(crate) fn create(
    conn: &Connection,
    project: ProjectId,
    (route, spam): (CreateRoute, Option<SpamReason>),
    (row, packed): NewRow,
    now: DateTime<Utc>,
) -> Result<CreatedLead, Error> {
    if let Some(merge) = merge_into(conn, project, route, &row.data)? {
        rewrite_row(conn, project, merge.lead, &merge.row, now)?;
        let lead = (merge.lead, merge.row.data.form_name());
        apply(conn, project, lead, &merge.steps(), now)?;
        return Ok(merge.outcome());
    }
    let duplicate_of = match Arrival::looks_for_original(spam) {
        true => duplicate_of(conn, project, &row.keys, now)?,
        false => None,
    };
    let arrival = Arrival {
        route,
        spam,
        duplicate_of,
    };
    let id = write_row(conn, Write::Insert(&arrival), project, (&row, &packed), now)?;
    apply(
        conn,
        project,
        (id, row.data.form_name()),
        &arrival.steps(),
        now,
    )?;
    Ok(arrival.outcome(id, &row))
}

/// [`leadtrack_core::LeadStore::correct_contact`], as core's [`correction`] plans it: the
/// row, its matching with the person's earlier leads, then each step.
///
/// [`correction`]: leadtrack_core::store::correction
pub(crate) fn correct_contact(
    conn: &Connection,
    (project, lead): (ProjectId, LeadId),
    correction: &ContactCorrection,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    if let Some(problem) = correction.problem() {
        return Err(StoreError::Invalid(problem).into());
    }
    let found = conn
        .prepare_cached(
            "SELECT data, status, created_at FROM leads WHERE project_id = ?1 AND id = ?2",
        )?
        .query_row((project.0, lead.0), |row| {
            Ok((
                row.get::<_, packed::Json>(0)?.0,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .optional()?;
    let Some((stored, status, created_at)) = found else {
        return Err(StoreError::NotFound(Entity::Lead).into());
    };
    let status: LeadStatus = rows::parse("status", status)?;
    let Some(planned) = correction.plan(lead, (&stored, status), by)? else {
        return Ok(false);
    };
    rewrite_row(conn, project, lead, &planned.row, now)?;
    let mut steps = planned.steps();
    if planned.rematches() {
        let since = to_millis(&lead::duplicate_window_start(from_millis(created_at)));
        let mut original: Option<i64> = None;
        for (column, key) in planned.row.keys.person_keys() {
            original = conn
                .prepare_cached(&sql::rematch_lookup(column, ["?1", "?2", "?3", "?4"]))?
                .query_row((project.0, key, lead.0, since), |row| row.get(0))
                .optional()?;
            if original.is_some() {
                break;
            }
        }
        conn.prepare_cached("UPDATE leads SET duplicate_of = ?2 WHERE id = ?1")?
            .execute((lead.0, original))?;
        steps.extend(original.map(|id| Step::MarkDuplicated(LeadId(id))));
    }
    apply(
        conn,
        project,
        (lead, planned.row.data.form_name()),
        &steps,
        now,
    )?;
    Ok(true)
}

/// [`sql::merge_lookup`] with this backend's placeholders, written once.
static MERGE_LOOKUP: LazyLock<String> = LazyLock::new(|| sql::merge_lookup(["?1", "?2", "?3"]));

/// The merge of `incoming` into the project's lead with its event id that `route` may
/// merge into ([`sql::merge_lookup`]), if there is one.
fn merge_into(
    conn: &Connection,
    project: ProjectId,
    route: CreateRoute,
    incoming: &LeadData,
) -> Result<Option<Merge>, Error> {
    let Some(event_id) = incoming.unique_event_id() else {
        return Ok(None);
    };
    let existing = conn
        .prepare_cached(&MERGE_LOOKUP)?
        .query_row((project.0, event_id, route_name(route)), |row| {
            Ok((row.get(0)?, row.get::<_, packed::Json>(1)?.0, row.get(2)?))
        })
        .optional()?;
    let Some((id, stored, status)) = existing else {
        return Ok(None);
    };
    let status: LeadStatus = rows::parse("status", status)?;
    let merge = Merge::plan(LeadId(id), (&stored, status), incoming.clone())?;
    Ok(Some(merge))
}

/// Writes `steps` of `lead` (its id and form), in the order core's [`arrival`] plan gives.
pub(crate) fn apply(
    conn: &Connection,
    project: ProjectId,
    (lead, form): (LeadId, Option<&str>),
    steps: &[Step],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    for step in steps {
        match step {
            Step::MarkDuplicated(original) => {
                // An original marked already is left alone: its page is not written again.
                conn.prepare_cached(
                    "UPDATE leads SET duplicated = 1 WHERE id = ?1 AND NOT duplicated",
                )?
                .execute([original.0])?;
            }
            Step::Record { activity, by } => {
                let event = EventRow::of((project, lead), now, by.as_ref(), activity)?;
                activity::record(conn, &event)?;
            }
            Step::ForgetCreation => activity::forget_creation(conn, project, lead)?,
            Step::Alert(kind) => alerts::enqueue(conn, (project, lead), *kind, now)?,
            Step::AssignInTurn => assignment::in_turn(conn, (project, lead), form, now)?,
            Step::Announce(event) => {
                webhooks::enqueue(conn, project, lead, *event, Uuid::new_v4(), None, now)?;
            }
        }
    }
    Ok(())
}

/// [`leadtrack_core::LeadStore::import_leads`], the rows made off the writer thread.
pub(crate) fn import(
    conn: &Connection,
    project: ProjectId,
    rows: Vec<(NewRow, DateTime<Utc>)>,
) -> Result<ImportCounts, Error> {
    crate::admin::project(conn, project)?;
    let mut counts = ImportCounts::default();
    let arrival = Arrival::imported();
    for ((row, packed), created_at) in rows {
        let at = to_millis(&created_at);
        let repeated = conn
            .prepare_cached(&sql::import_duplicate(["?1", "?2", "?3", "?4"]))?
            .query_row(
                (project.0, row.data.unique_event_id(), &row.keys.email, at),
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if repeated {
            counts.duplicates += 1;
            continue;
        }
        // An imported lead has no step besides its row: its history's `created` is implied
        // by the row, and nobody hears of a past lead.
        write_row(
            conn,
            Write::Insert(&arrival),
            project,
            (&row, &packed),
            created_at,
        )?;
        counts.imported += 1;
    }
    Ok(counts)
}

/// A new lead's row and its data packed (`packed.rs`), both made off the writer thread.
pub(crate) type NewRow = (LeadRow, Vec<u8>);

/// The row of a new lead's `data`, and its data packed.
pub(crate) fn new_row(data: LeadData) -> Result<NewRow, Error> {
    let row = LeadRow::of(data)?;
    let packed = packed::pack(&row.json)?;
    Ok((row, packed))
}

/// The rows of imported leads ([`new_row`]), each with its creation time.
pub(crate) fn imported_rows(
    leads: &[leadtrack_core::import::ImportedLead],
) -> Result<Vec<(NewRow, DateTime<Utc>)>, Error> {
    leads
        .iter()
        .map(|lead| Ok((new_row(lead.data.clone())?, lead.created_at)))
        .collect()
}

/// What [`write_row`] does: insert a lead as it arrived, or rewrite a lead.
enum Write<'a> {
    Insert(&'a Arrival),
    Update(LeadId),
}

/// The lead a new lead with `keys` duplicates, by core's [`sql::duplicate_lookup`].
fn duplicate_of(
    conn: &Connection,
    project: ProjectId,
    keys: &LeadKeys,
    now: DateTime<Utc>,
) -> Result<Option<LeadId>, Error> {
    let since = to_millis(&lead::duplicate_window_start(now));
    for (column, key) in keys.person_keys() {
        let found = conn
            .prepare_cached(&sql::duplicate_lookup(column, ["?1", "?2", "?3"]))?
            .query_row((project.0, key, since), |row| row.get(0))
            .optional()?;
        if let Some(original) = found {
            return Ok(Some(LeadId(original)));
        }
    }
    Ok(None)
}

/// Inserts a new lead or rewrites an existing lead's row. Returns the lead's id.
fn write_row(
    conn: &Connection,
    write: Write<'_>,
    project: ProjectId,
    (row, packed): (&LeadRow, &[u8]),
    now: DateTime<Utc>,
) -> Result<LeadId, Error> {
    let (data, keys) = (&row.data, &row.keys);
    let [
        first_source,
        first_medium,
        first_campaign,
        last_source,
        last_medium,
        last_campaign,
    ] = &row.touches;
    let now = to_millis(&now);
    let form_name = data.form_name();
    let (first_name, last_name) = (data.user("firstName"), data.user("lastName"));
    let unique_event_id = data.unique_event_id();
    let mut params: Vec<(&str, &dyn ToSql)> = vec![
        (":project_id", &project.0),
        (":now", &now),
        (":data", &packed),
        (":form_name", &form_name),
        (":first_name", &first_name),
        (":last_name", &last_name),
        (":unique_identifier", &data.unique_identifier),
        (":unique_event_id", &unique_event_id),
        (":email_key", &keys.email),
        (":phone_key", &keys.phone),
        (":search_text", &row.search_text),
        (":q_text", &row.q_text),
        (":form_key", &row.form_key),
        (":has_gclid", &keys.has_gclid),
        (":has_cid", &keys.has_cid),
        (":has_fbp", &keys.has_fbp),
        (":has_fbc", &keys.has_fbc),
        (":has_msclkid", &keys.has_msclkid),
        (":has_li_fat_id", &keys.has_li_fat_id),
        (":has_gbraid", &keys.has_gbraid),
        (":has_ttclid", &keys.has_ttclid),
        (":has_rdt_cid", &keys.has_rdt_cid),
        (":has_sccid", &keys.has_sccid),
        (":has_epik", &keys.has_epik),
        (":has_twclid", &keys.has_twclid),
        (":first_source", &first_source),
        (":first_medium", &first_medium),
        (":first_campaign", &first_campaign),
        (":last_source", &last_source),
        (":last_medium", &last_medium),
        (":last_campaign", &last_campaign),
    ];
    match &write {
        Write::Update(LeadId(id)) => {
            params.push((":id", id));
            conn.prepare_cached(
                "UPDATE leads SET updated_at = :now, data = :data, form_name = :form_name,
                first_name = :first_name, last_name = :last_name,
                unique_identifier = :unique_identifier, unique_event_id = :unique_event_id,
                email_key = :email_key, phone_key = :phone_key, search_text = :search_text,
                q_text = :q_text, form_key = :form_key,
                has_gclid = :has_gclid, has_cid = :has_cid, has_fbp = :has_fbp,
                has_fbc = :has_fbc, has_msclkid = :has_msclkid, has_li_fat_id = :has_li_fat_id,
                has_gbraid = :has_gbraid, has_ttclid = :has_ttclid, has_rdt_cid = :has_rdt_cid,
                has_sccid = :has_sccid, has_epik = :has_epik, has_twclid = :has_twclid,
                first_source = :first_source,
                first_medium = :first_medium, first_campaign = :first_campaign,
                last_source = :last_source, last_medium = :last_medium,
                last_campaign = :last_campaign
             WHERE id = :id AND project_id = :project_id",
            )?
            .execute(params.as_slice())?;
            Ok(LeadId(*id))
        }
        Write::Insert(arrival) => {
            let status = arrival.status();
            let status = status.as_ref();
            let created_via = arrival.created_via();
            let spam_reason = arrival.spam.map(<&str>::from);
            let duplicate_of = arrival.duplicate_of.map(|lead| lead.0);
            params.push((":status", &status));
            params.push((":created_via", &created_via));
            params.push((":spam_reason", &spam_reason));
            params.push((":duplicate_of", &duplicate_of));
            conn.prepare_cached(
                "INSERT INTO leads (project_id, status, created_at, updated_at, data, form_name,
                first_name, last_name, unique_identifier, unique_event_id, email_key,
                phone_key, search_text, has_gclid, has_cid, has_fbp, has_fbc, has_msclkid,
                has_li_fat_id, has_gbraid, has_ttclid, has_rdt_cid, has_sccid, has_epik,
                has_twclid, first_source, first_medium, first_campaign, last_source,
                last_medium, last_campaign, created_via, spam_reason, duplicate_of, q_text,
                form_key)
             VALUES (:project_id, :status, :now, :now, :data, :form_name, :first_name,
                :last_name, :unique_identifier, :unique_event_id, :email_key, :phone_key,
                :search_text, :has_gclid, :has_cid, :has_fbp, :has_fbc, :has_msclkid,
                :has_li_fat_id, :has_gbraid, :has_ttclid, :has_rdt_cid, :has_sccid, :has_epik,
                :has_twclid, :first_source, :first_medium, :first_campaign, :last_source,
                :last_medium, :last_campaign, :created_via, :spam_reason, :duplicate_of,
                :q_text, :form_key)",
            )?
            .execute(params.as_slice())?;
            let id = conn.last_insert_rowid();
            Ok(LeadId(id))
        }
    }
}

/// Rewrites `lead`'s row as `row`, planned on the writer: its data is packed here.
pub(crate) fn rewrite_row(
    conn: &Connection,
    project: ProjectId,
    lead: LeadId,
    row: &LeadRow,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let packed = packed::pack(&row.json)?;
    write_row(conn, Write::Update(lead), project, (row, &packed), now)?;
    Ok(())
}

/// Calls `step` with each stored lead's id and data, a thousand leads at a time, in id
/// order (each batch read whole first: an update never runs under an open read of its
/// table): a migration's backfill of columns derived from the data, before migration 62
/// packed it (`packed.rs`), while it is JSON text.
fn each_lead(
    conn: &Connection,
    mut step: impl FnMut(i64, LeadData) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut after = 0_i64;
    loop {
        let batch: Vec<(i64, String)> = conn
            .prepare_cached("SELECT id, data FROM leads WHERE id > ?1 ORDER BY id LIMIT 1000")?
            .query_map([after], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let Some((last, _)) = batch.last() else {
            return Ok(());
        };
        after = *last;
        for (id, data) in batch {
            step(id, serde_json::from_str(&data)?)?;
        }
    }
}

/// Fills the touch columns (migration 5) for the leads stored before them.
pub(crate) fn backfill_touches(conn: &Connection) -> Result<(), Error> {
    let mut update = conn.prepare_cached(
        "UPDATE leads SET first_source = ?2, first_medium = ?3, first_campaign = ?4,
            last_source = ?5, last_medium = ?6, last_campaign = ?7
         WHERE id = ?1",
    )?;
    each_lead(conn, |id, data| {
        let touches = channel::touches(&data);
        let [a, b, c, d, e, f] = report::touch_columns(&touches);
        if a.is_some() {
            update.execute((id, a, b, c, d, e, f))?;
        }
        Ok(())
    })
}

/// Fills `q_text` (migration 25) for the leads stored before it.
pub(crate) fn backfill_q_text(conn: &Connection) -> Result<(), Error> {
    let mut update = conn.prepare_cached("UPDATE leads SET q_text = ?2 WHERE id = ?1")?;
    each_lead(conn, |id, data| {
        update.execute((id, leadtrack_core::store::q_text(&data)))?;
        Ok(())
    })
}

/// Rewrites `q_text` (migration 45) for the leads with a phone number, whose line in it
/// became the number's digits.
pub(crate) fn backfill_phone_q_text(conn: &Connection) -> Result<(), Error> {
    let mut update = conn.prepare_cached("UPDATE leads SET q_text = ?2 WHERE id = ?1")?;
    each_lead(conn, |id, data| {
        if data.user("phone").is_some() {
            update.execute((id, leadtrack_core::store::q_text(&data)))?;
        }
        Ok(())
    })
}

/// Fills `form_key` (migration 26) for the leads stored before it.
pub(crate) fn backfill_form_key(conn: &Connection) -> Result<(), Error> {
    let mut update = conn.prepare_cached("UPDATE leads SET form_key = ?2 WHERE id = ?1")?;
    each_lead(conn, |id, data| {
        if let Some(form_name) = data.form_name() {
            update.execute((id, matching::form_key(form_name)))?;
        }
        Ok(())
    })
}

/// Holds each of `leads` that is open as spam, marked by `by` ([`LeadStore::mark_spam`]).
///
/// [`LeadStore::mark_spam`]: leadtrack_core::LeadStore::mark_spam
pub(crate) fn mark_spam(
    conn: &Connection,
    project: ProjectId,
    leads: &[LeadId],
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<Vec<LeadId>, Error> {
    let reason = SpamReason::Marked;
    let mut held = Vec::new();
    let mut mark = conn.prepare_cached(
        "UPDATE leads SET status = 'spam', spam_reason = ?3, updated_at = ?4
         WHERE project_id = ?1 AND id = ?2 AND status = 'open'",
    )?;
    let steps = arrival::held_steps(by);
    for lead in leads {
        if mark.execute((project.0, lead.0, reason.as_ref(), to_millis(&now)))? == 1 {
            apply(conn, project, (*lead, None), &steps, now)?;
            held.push(*lead);
        }
    }
    Ok(held)
}

/// Takes a spam `lead` out of spam before a person's status change: its reason goes, its
/// history gains `not_spam`, and the webhooks hear `lead.created` at last.
pub(crate) fn release_spam(
    conn: &Connection,
    project: ProjectId,
    lead: &StoredLead,
    by: &Actor,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    conn.prepare_cached("UPDATE leads SET status = 'open', spam_reason = NULL WHERE id = ?1")?
        .execute([lead.id.0])?;
    let steps = arrival::released_steps(by);
    apply(conn, project, (lead.id, lead.data.form_name()), &steps, now)
}
