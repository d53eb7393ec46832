//! Importing past leads from a CSV file: upload it, map its columns to fields with a
//! preview of its first rows, then import it, its progress shown until it is done
//! ([`leadtrack_core::import`]).
//!
//! An upload lives in this process's memory between its pages, for an hour at most: a
//! file is imported where it was uploaded, and nothing of it is written anywhere but the
//! leads it makes.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use askama::Template;
use chrono::Utc;
use leadtrack_core::Store;
use leadtrack_core::activity::{Attribution, ProjectActivity};
use leadtrack_core::import::{BadRow, DateOrder, ImportCounts, ImportFile};
use leadtrack_core::mapping::{self, FieldMap};
use leadtrack_core::types::ProjectId;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{Answer, Frame, Owner, Problems, owner_upload, sentence};
use crate::format;
use crate::render::{self, Layout};
use crate::routes::Settings;
use crate::session::Form;
use crate::{Config, Request};

/// The largest file taken: 100,000 rows of a dozen columns, with room to spare.
const UPLOAD_LIMIT: usize = 64 * 1024 * 1024;
/// How long an upload is kept.
const KEPT: Duration = Duration::from_secs(60 * 60);
/// How many uploads are kept at once, in all projects (the oldest goes first).
const KEPT_AT_MOST: usize = 8;
/// How many rows the mapping page previews.
const PREVIEWED: usize = 5;
/// How many bad rows the outcome lists.
const LISTED_BAD: usize = 200;

/// Where an upload stands.
#[derive(Clone)]
enum Stage {
    /// Its columns are being mapped.
    Mapping,
    /// Being imported: rows read so far.
    Running(usize),
    /// Imported.
    Done(ImportCounts, Arc<Vec<BadRow>>),
    /// The import failed (the database): what to say.
    Failed(String),
}

/// A file uploaded for import.
struct Upload {
    project: ProjectId,
    name: String,
    file: Arc<ImportFile>,
    rows: usize,
    stage: Stage,
    at: Instant,
}

/// The uploads, by their random id.
static UPLOADS: LazyLock<Mutex<HashMap<String, Upload>>> = LazyLock::new(Default::default);

/// Runs `f` on the uploads (a panicked holder left them consistent: each change is one
/// assignment).
fn uploads<T>(f: impl FnOnce(&mut HashMap<String, Upload>) -> T) -> T {
    f(&mut UPLOADS.lock().unwrap_or_else(PoisonError::into_inner))
}

#[derive(Template)]
#[template(path = "settings/import.html")]
struct ImportPage {
    layout: Layout,
    frame: Frame,
    problems: Problems,
}

/// One row of the preview: its line, and the lead's main fields or why it is no lead.
struct PreviewRow {
    line: u64,
    cells: Vec<String>,
    problem: Option<String>,
}

/// A field's column picker.
struct Picker {
    field: &'static str,
    column: String,
}

#[derive(Template)]
#[template(path = "settings/import_file.html")]
struct FilePage {
    layout: Layout,
    frame: Frame,
    id: String,
    name: String,
    rows: usize,
    headers: Vec<String>,
    pickers: Vec<Picker>,
    preview: Vec<PreviewRow>,
    stage: Stage,
    problems: Problems,
    /// How dates with the year last are read: each choice's value and words, and which is
    /// in use.
    date_orders: Vec<(&'static str, &'static str, bool)>,
}

impl FilePage {
    /// The pickers of the person's and the form's fields, or (`attribution`) of the click
    /// ids and UTM parameters.
    fn pickers_of(&self, attribution: bool) -> Vec<&Picker> {
        self.pickers
            .iter()
            .filter(|p| mapping::is_attribution(p.field) == attribution)
            .collect()
    }

    /// The preview's column `index` (after the line's), for narrow screens.
    fn label(&self, index: &usize) -> &'static str {
        PREVIEW_LABELS.get(*index).copied().unwrap_or_default()
    }

    /// A field's name for people ("First name").
    fn field_label(&self, field: &'static str) -> &'static str {
        mapping::label(field)
    }

    /// Whether a click id or UTM parameter is mapped (its group shows open).
    fn attribution_mapped(&self) -> bool {
        self.pickers_of(true).iter().any(|p| !p.column.is_empty())
    }

    /// The share of rows read, in percent.
    fn percent(&self, read: &usize) -> usize {
        (read * 100).checked_div(self.rows).unwrap_or(100)
    }

    /// The first bad rows, to list.
    fn listed<'a>(&self, bad: &'a [BadRow]) -> &'a [BadRow] {
        &bad[..bad.len().min(LISTED_BAD)]
    }
}

/// The fields the preview shows, in its columns' order.
const PREVIEW_FIELDS: [&str; 5] = ["email", "firstName", "lastName", "phone", "formName"];
/// The preview's columns (its fields', then the creation time's) as people read them.
const PREVIEW_LABELS: [&str; 6] = [
    "Email",
    "First name",
    "Last name",
    "Phone",
    "Form",
    "Created",
];

/// `GET import`.
pub(super) fn page(owner: Owner) -> Response {
    upload_page(&owner, StatusCode::OK, Problems::default())
}

/// The upload form, with `problems`.
fn upload_page(owner: &Owner, status: StatusCode, problems: Problems) -> Response {
    let (layout, frame) = owner.frame(Settings::Import, None);
    render::page(
        status,
        &ImportPage {
            layout,
            frame,
            problems,
        },
    )
}

/// `POST import`: keeps the file uploaded, mapped by its column names, and goes to its
/// page; a file that cannot be imported is said so on the upload form.
pub(super) async fn upload<S: Store>(
    store: &S,
    config: &Config,
    request: &Request,
    public_id: &str,
    body: leadtrack_http::Body,
) -> Answer {
    let (owner, _, upload) =
        owner_upload(store, (config, request), public_id, (body, UPLOAD_LIMIT)).await?;
    let Some(upload) = upload.filter(|u| !u.bytes.is_empty()) else {
        let problems = Problems::one("file", "Choose a CSV file to import.");
        return Ok(upload_page(&owner, StatusCode::BAD_REQUEST, problems));
    };
    let file = match ImportFile::read(upload.bytes, &[]) {
        Ok(file) => file,
        Err(problem) => {
            let problems = Problems::one("file", sentence(&problem));
            return Ok(upload_page(&owner, StatusCode::BAD_REQUEST, problems));
        }
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    let rows = file.rows();
    uploads(|all| {
        all.retain(|_, kept| kept.at.elapsed() < KEPT);
        while all.len() >= KEPT_AT_MOST {
            let oldest = all
                .iter()
                .min_by_key(|(_, u)| u.at)
                .map(|(id, _)| id.clone());
            oldest.map(|id| all.remove(&id));
        }
        let kept = Upload {
            project: owner.project().id,
            name: upload.name,
            file: Arc::new(file),
            rows,
            stage: Stage::Mapping,
            at: Instant::now(),
        };
        all.insert(id.clone(), kept);
    });
    Ok(owner.redirect_to(Settings::ImportFile, &id, None))
}

/// `GET import/{id}`: the columns and the preview, or the import's progress, or its
/// outcome.
pub(super) fn file(owner: Owner, id: &str) -> Response {
    file_page(&owner, id, StatusCode::OK, Problems::default())
}

/// An upload's page as its stage shows it.
fn file_page(owner: &Owner, id: &str, status: StatusCode, problems: Problems) -> Response {
    let project = owner.project().id;
    let found = uploads(|all| {
        let upload = all.get(id).filter(|u| u.project == project)?;
        Some((
            upload.name.clone(),
            Arc::clone(&upload.file),
            upload.rows,
            upload.stage.clone(),
        ))
    });
    let Some((name, file, rows, stage)) = found else {
        return owner.not_found();
    };
    let mapped = file.mapping();
    let pickers = mapping::targets()
        .map(|field| Picker {
            field,
            column: mapped
                .iter()
                .find(|pair| pair.target == field)
                .map(|pair| pair.source.clone())
                .unwrap_or_default(),
        })
        .collect();
    let (layout, frame) = owner.frame(Settings::Import, None);
    let page = FilePage {
        layout,
        frame,
        id: id.to_owned(),
        name,
        rows,
        headers: file.headers().to_vec(),
        pickers,
        preview: preview(&file),
        stage,
        problems,
        date_orders: [
            (
                DateOrder::Auto,
                "As the file shows (refused where a date could be either)",
            ),
            (DateOrder::DayFirst, "Day first: 15/10/2026, 15.10.2026"),
            (DateOrder::MonthFirst, "Month first: 10/15/2026"),
        ]
        .into_iter()
        .map(|(order, words)| (<&str>::from(&order), words, order == file.date_order()))
        .collect(),
    };
    render::page(status, &page)
}

/// The first rows as the mapping makes them.
fn preview(file: &ImportFile) -> Vec<PreviewRow> {
    file.leads(Utc::now())
        .take(PREVIEWED)
        .map(|row| match row {
            Ok(lead) => {
                let mut cells: Vec<String> = PREVIEW_FIELDS
                    .iter()
                    .map(|field| {
                        let section = match *field {
                            "formName" => &lead.data.form_data,
                            _ => &lead.data.user_data,
                        };
                        section
                            .get(*field)
                            .and_then(|v| v.as_str())
                            .unwrap_or("")
                            .to_owned()
                    })
                    .collect();
                cells.push(format::exact(&lead.created_at));
                PreviewRow {
                    line: lead.line,
                    cells,
                    problem: None,
                }
            }
            Err(bad) => PreviewRow {
                line: bad.line,
                cells: Vec::new(),
                problem: Some(sentence(&bad.reason)),
            },
        })
        .collect()
}

/// `POST import/{id}`: maps the columns as picked, then shows the preview again
/// (`action=preview`) or starts the import and shows its progress.
pub(super) async fn start<S: Store + Clone>(
    store: &S,
    (owner, form): (Owner, Form),
    id: &str,
) -> Answer {
    let project = owner.project().id;
    let found = uploads(|all| {
        let upload = all.get(id).filter(|u| u.project == project)?;
        Some((
            Arc::clone(&upload.file),
            upload.name.clone(),
            upload.stage.clone(),
        ))
    });
    let Some((file, name, Stage::Mapping)) = found else {
        return match found {
            Some(_) => Ok(owner.redirect_to(Settings::ImportFile, &id, None)),
            None => Ok(owner.not_found()),
        };
    };
    let picked: Vec<FieldMap> = mapping::targets()
        .map(|field| FieldMap {
            target: field.to_owned(),
            source: form.get(&format!("map-{field}")).trim().to_owned(),
        })
        .collect();
    let order = form.get("date_order").parse().unwrap_or_default();
    let remapped = match file.remap(&picked) {
        Ok(remapped) => Arc::new(remapped.with_date_order(order)),
        Err(problem) => {
            let problems = Problems::one("mapping", sentence(&problem));
            return Ok(file_page(&owner, id, StatusCode::BAD_REQUEST, problems));
        }
    };
    let importing = form.get("action") == "import";
    uploads(|all| {
        if let Some(upload) = all.get_mut(id) {
            upload.file = Arc::clone(&remapped);
            if importing {
                upload.stage = Stage::Running(0);
            }
        }
    });
    if importing {
        let by = (project, owner.by());
        tokio::spawn(run(store.clone(), by, (id.to_owned(), name), remapped));
    }
    Ok(owner.redirect_to(Settings::ImportFile, &id, None))
}

/// Imports the file, its progress and outcome kept for its page, and writes the outcome
/// to the project's audit log.
async fn run<S: Store>(
    store: S,
    (project, by): (ProjectId, Attribution),
    (id, name): (String, String),
    file: Arc<ImportFile>,
) {
    let stage = |stage: Stage| {
        uploads(|all| {
            if let Some(upload) = all.get_mut(&id) {
                upload.stage = stage;
            }
        });
    };
    let mut progress = |read: usize| stage(Stage::Running(read));
    let outcome = store.import_file(project, &file, &mut progress).await;
    match outcome {
        Ok((counts, bad)) => {
            let imported = ProjectActivity::LeadsImported {
                file: name,
                imported: counts.imported,
                duplicates: counts.duplicates,
                bad: bad.len() as u64,
            };
            let recorded = store.record_project_event(project, &by, &imported, Utc::now());
            if recorded.await.is_err() {
                tracing::error!("an import's outcome could not be written to the audit log");
            }
            tracing::info!(
                imported = counts.imported,
                duplicates = counts.duplicates,
                bad = bad.len(),
                "leads imported"
            );
            stage(Stage::Done(counts, Arc::new(bad)));
        }
        Err(err) => {
            tracing::error!(error = %err, "an import failed");
            stage(Stage::Failed(
                "The database failed during the import; the rows imported before stay, and importing the file again adds only the rest.".to_owned(),
            ));
        }
    }
}
