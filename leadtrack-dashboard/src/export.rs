//! `GET /projects/{projectId}/leads.csv`: the leads of an inbox view as CSV (RFC 4180), one
//! row per lead with its data flattened into columns.
//!
//! The view is read by [`InboxView::from_query`], the inbox's own function, so an export
//! holds exactly the leads its inbox view lists (on all pages). The body is streamed: a
//! task reads the leads a batch at a time ([`leadtrack_core::LeadStore::export_leads`], each
//! batch continuing after the last lead of the one before) and hands each batch's CSV to
//! the response, waiting while the client is slow, so a million leads never sit in memory.
//!
//! The file starts with UTF-8's byte-order mark, which is how Excel knows the file is
//! UTF-8 (without it, "Müller" opens garbled); times are ISO 8601 in UTC.
//!
//! Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` (or a tab or a carriage
//! return) as a formula; such a cell gets a leading `'`, so a lead's data cannot put a
//! formula into someone's spreadsheet.

use std::borrow::Cow;
use std::collections::HashMap;

use bytes::Bytes;
use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::activity::{LeadEvent, ProjectActivity};
use leadtrack_core::channel;
use leadtrack_core::label::ConversionLabel;
use leadtrack_core::lead::StoredLead;
use leadtrack_core::request::{Cursor, LeadQuery};
use leadtrack_core::types::{LeadId, ProjectId, Role};
use tokio::sync::mpsc;
use warp::Reply;
use warp::http::StatusCode;
use warp::http::header::{self, HeaderValue};
use warp::reply::Response;

use crate::view::InboxView;
use crate::{Config, Request, access, render};

/// Leads read and written per batch.
pub(crate) const BATCH: u32 = 1_000;

/// The columns, in order.
pub(crate) const COLUMNS: [&str; 44] = [
    "id",
    "created",
    "status",
    "form_name",
    "first_name",
    "last_name",
    "email",
    "phone",
    "company",
    "price",
    "currency",
    "note",
    "conversion_id",
    "label",
    "rated_at",
    "rated_by",
    "assignee",
    "unique_identifier",
    "first_touch",
    "first_campaign",
    "last_touch",
    "last_campaign",
    "gclid",
    "gbraid",
    "wbraid",
    "cid",
    "fbp",
    "fbc",
    "fbclid",
    "msclkid",
    "li_fat_id",
    "ttclid",
    "_ttp",
    "rdt_cid",
    "_rdt_uuid",
    "ScCid",
    "_scid",
    "epik",
    "_epik",
    "twclid",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "form_fields",
];

/// `GET /projects/{projectId}/leads.csv`.
pub(crate) async fn handle<S: Store + Clone>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
) -> Response {
    let (viewer, membership) =
        match access::project_page(store, request, public_id, Role::Member).await {
            Ok(found) => found,
            Err(response) => return response,
        };
    // All of a project's personal data at once: owners, and the members they allow.
    if !membership.may_export() {
        return render::error(
            StatusCode::FORBIDDEN,
            Some(&viewer),
            "Owners allow exports",
            "Exporting the project's leads is for its owners and the members they allow. \
             Ask an owner to allow you in Settings > Members.",
        );
    }
    let (view, query) = InboxView::from_query(&request.query, viewer.user.id);
    // The inbox drops what it cannot read and says so; a file has no room to say it, and
    // an export wider than asked is worse than none.
    if !view.problems.is_empty() {
        return render::error(
            StatusCode::BAD_REQUEST,
            Some(&viewer),
            "This export's link is not right",
            view.problems.join(" "),
        );
    }
    let project = membership.project;
    // Recorded before the first byte: whoever starts an export has the data.
    let exported = ProjectActivity::Exported {
        view: request.query.chars().take(500).collect(),
    };
    let by = viewer.attribution(request, config);
    if let Err(err) = store
        .record_project_event(project.id, &by, &exported, Utc::now())
        .await
    {
        return render::store_failure(err, Some(&viewer));
    }
    let labels = match store.labels(project.id).await {
        Ok(labels) => labels,
        Err(err) => return render::store_failure(err, Some(&viewer)),
    };
    let filename = format!(
        "leads-{}-{}.csv",
        project.public_id,
        Utc::now().format("%Y-%m-%d")
    );
    let export = Export {
        project: project.id,
        currency: project.currency,
        labels,
        query,
    };
    // A task, not a stream polled by the response: warp's body must be `Sync`, the store's
    // futures are not. The channel holds two chunks, so the next batch is read while one
    // goes out, and a slow client holds the reading back.
    let (sender, mut receiver) = mpsc::channel(2);
    tokio::spawn(export.run(store.clone(), sender));
    let body = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    let mut response = warp::reply::stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    // The public id is letters, digits, `_` and `-` (core's rule), so it needs no quoting.
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// What an export writes, for the task that writes it.
struct Export {
    project: ProjectId,
    currency: String,
    labels: Vec<ConversionLabel>,
    query: LeadQuery,
}

/// A chunk of the body. An error ends the body broken, so that a failure after the
/// response began shows as a failed download, never as a file that looks complete.
type Chunk = Result<Bytes, std::io::Error>;

/// Why an export stopped early.
enum Stop {
    /// The client went away: nothing to tell anyone.
    Gone,
    /// Reading or writing failed.
    Failed(String),
}

impl From<leadtrack_core::StoreError> for Stop {
    fn from(err: leadtrack_core::StoreError) -> Self {
        Self::Failed(err.to_string())
    }
}

impl From<csv::Error> for Stop {
    fn from(err: csv::Error) -> Self {
        Self::Failed(err.to_string())
    }
}

impl From<std::io::Error> for Stop {
    fn from(err: std::io::Error) -> Self {
        Self::Failed(err.to_string())
    }
}

impl Export {
    /// Writes the export into `sender`, the response body's other end.
    async fn run<S: Store>(self, store: S, sender: mpsc::Sender<Chunk>) {
        if let Err(Stop::Failed(error)) = self.write(&store, &sender).await {
            tracing::error!(%error, "a CSV export failed");
            let _ = sender
                .send(Err(std::io::Error::other("the export failed")))
                .await;
        }
    }

    /// Sends the header with the first batch's rows, then each batch's rows, until the
    /// leads run out or the client goes away.
    async fn write<S: Store>(&self, store: &S, sender: &mpsc::Sender<Chunk>) -> Result<(), Stop> {
        let mut after: Option<Cursor> = None;
        loop {
            let batch = store
                .export_leads(self.project, &self.query, after.as_ref(), BATCH)
                .await?;
            // RFC 4180 ends records with CRLF (the crate's default is LF).
            let start = if after.is_none() { BOM } else { &[] };
            let mut csv = csv::WriterBuilder::new()
                .terminator(csv::Terminator::CRLF)
                .from_writer(start.to_vec());
            if after.is_none() {
                csv.write_record(COLUMNS)?;
            }
            let rated: Vec<LeadId> = batch
                .iter()
                .filter(|lead| lead.conversion_id.is_some())
                .map(|lead| lead.id)
                .collect();
            let ratings: HashMap<LeadId, LeadEvent> = store
                .last_ratings(self.project, &rated)
                .await?
                .into_iter()
                .collect();
            for lead in &batch {
                let row = self.row(lead, ratings.get(&lead.id));
                csv.write_record(row.iter().map(|cell| cell.as_bytes()))?;
            }
            let chunk = csv.into_inner().map_err(|err| err.into_error())?;
            sender
                .send(Ok(Bytes::from(chunk)))
                .await
                .map_err(|_| Stop::Gone)?;
            match batch.last() {
                Some(last) if batch.len() == BATCH as usize => {
                    after = Some(Cursor::after(last, self.query.sort.field));
                }
                _ => return Ok(()),
            }
        }
    }

    /// A lead's row, in [`COLUMNS`] order, with its current `rating`'s event if it has one.
    fn row<'a>(&'a self, lead: &'a StoredLead, rating: Option<&LeadEvent>) -> Vec<Cow<'a, str>> {
        let data = &lead.data;
        let touches = channel::touches(data);
        let ends = channel::first_and_last(&touches);
        let user = |name| data.user(name).map(Cow::Borrowed);
        let attribution = |name| data.attribution(name).map(Cow::Borrowed);
        let owned = |text: String| Some(Cow::Owned(text));
        let campaign =
            |touch: Option<&channel::Touch>| touch.and_then(|t| t.campaign.clone()).map(Cow::Owned);
        let cells: [Option<Cow<'a, str>>; COLUMNS.len()] = [
            owned(lead.id.to_string()),
            owned(leadtrack_core::time::format(&lead.created_at)),
            Some(Cow::Borrowed(lead.status.as_ref())),
            data.form_name().map(Cow::Borrowed),
            user("firstName"),
            user("lastName"),
            user("email"),
            user("phone"),
            user("companyName"),
            lead.price.map(|cents| Cow::Owned(decimal(cents))),
            Some(Cow::Borrowed(self.currency.as_str())),
            lead.note.as_deref().map(Cow::Borrowed),
            lead.conversion_id.map(|id| Cow::Owned(id.to_string())),
            lead.conversion_id
                .map(|id| Cow::Owned(crate::rating::conversion_name(id, &self.labels))),
            rating.and_then(|event| owned(leadtrack_core::time::format(&event.at))),
            rating
                .and_then(|event| event.by.as_ref())
                .and_then(|by| owned(by.to_string())),
            lead.assignee
                .as_ref()
                .map(|a| Cow::Borrowed(a.name.as_str())),
            data.unique_identifier.as_deref().map(Cow::Borrowed),
            ends.and_then(|(first, _)| owned(first.label())),
            campaign(ends.map(|(first, _)| first)),
            ends.and_then(|(_, last)| owned(last.label())),
            campaign(ends.map(|(_, last)| last)),
            attribution("gclid"),
            attribution("gbraid"),
            attribution("wbraid"),
            attribution("cid"),
            attribution("fbp"),
            data.meta_click_id(lead.created_at).map(Cow::Owned),
            attribution("fbclid"),
            attribution("msclkid"),
            attribution("li_fat_id"),
            attribution("ttclid"),
            attribution("_ttp"),
            attribution("rdt_cid"),
            attribution("_rdt_uuid"),
            attribution("ScCid"),
            attribution("_scid"),
            attribution("epik"),
            attribution("_epik"),
            attribution("twclid"),
            attribution("utm_source"),
            attribution("utm_medium"),
            attribution("utm_campaign"),
            (!data.form_data.is_empty())
                .then(|| serde_json::to_string(&data.form_data).ok())
                .flatten()
                .map(Cow::Owned),
        ];
        cells
            .into_iter()
            .map(|cell| neutralise(cell.unwrap_or_default()))
            .collect()
    }
}

/// UTF-8's byte-order mark, which the file starts with.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Cents as a plain decimal, as spreadsheets read numbers: `150050` is `1500.50`.
fn decimal(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, (cents % 100).abs())
}

/// A cell a spreadsheet would run as a formula, made text with a leading `'`.
fn neutralise(cell: Cow<'_, str>) -> Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{cell}"))
    } else {
        cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_become_text() {
        for (cell, written) in [
            ("=1+2", "'=1+2"),
            ("+49 30 1234", "'+49 30 1234"),
            ("-5", "'-5"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(neutralise(Cow::Borrowed(cell)), written, "{cell:?}");
        }
    }

    #[test]
    fn prices_are_plain_decimals() {
        assert_eq!(decimal(150_050), "1500.50");
        assert_eq!(decimal(5), "0.05");
        assert_eq!(decimal(0), "0.00");
    }
}
