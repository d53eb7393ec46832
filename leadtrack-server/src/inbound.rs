//! `inbound ...` and `lead import`: leads from form tools' webhooks, and past leads from a
//! CSV file. Each change is written to the project's audit log.

use std::path::Path;
use std::path::PathBuf;

use clap::Subcommand;
use leadtrack_core::activity::ProjectActivity;
use leadtrack_core::import::{BadRow, DateOrder, ImportCounts, ImportFile};
use leadtrack_core::inbound::Preset;
use leadtrack_core::inbound::{InboundHook, parse_mapping};
use leadtrack_core::integration::Secret;
use leadtrack_core::mapping::FieldMap;
use leadtrack_core::project::Project;
use leadtrack_core::time::format;
use leadtrack_core::{Admin, LeadStore};
use serde_json::{Value, json};

use crate::Failure;
use crate::admin::{audit, project};
use crate::listing::ProjectListing;
use crate::mail::Links;

/// `inbound ...`: a project's inbound webhooks, for form tools.
#[derive(Debug, Subcommand)]
pub(crate) enum InboundCommand {
    /// Make an inbound webhook: the tool's posts become leads. Prints its URL last.
    Create {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The form tool, whose signature is checked and whose fields are mapped:
        /// typeform, tally, webflow, jotform or custom.
        #[arg(long, value_name = "TOOL")]
        preset: Preset,
        /// What to call it (the tool's name when not given).
        #[arg(long, value_name = "NAME", default_value = "")]
        name: String,
        /// The secret: the one to give the tool to sign with (Typeform, Tally), Webflow's
        /// `secretKey` for a webhook made through its API, or the one the URL carries
        /// (Jotform, custom, Webflow's unsigned webhooks). Generated when not given.
        #[arg(
            long,
            env = "LEADTRACK_INBOUND_SECRET",
            hide_env_values = true,
            value_name = "SECRET"
        )]
        secret: Option<String>,
        /// Where a lead field is read, as FIELD=JSONPATH (e.g.
        /// `email=$.data.fields[?@.label == 'Work email'].value`), in place of the
        /// preset's; repeat for more.
        #[arg(long = "map", value_name = "FIELD=JSONPATH")]
        map: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List a project's inbound webhooks (secrets hidden).
    List(ProjectListing),
    /// Remove an inbound webhook: later posts to it are refused.
    Remove {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The webhook's id, as `inbound list` shows it.
        #[arg(value_name = "WEBHOOK_ID")]
        id: String,
    },
}

/// `lead ...`: leads in bulk.
#[derive(Debug, Subcommand)]
pub(crate) enum LeadCommand {
    /// Import past leads from a CSV file (UTF-8; comma, semicolon or tab), each dated by
    /// its createdAt. Columns named like the lead's fields (email, firstName, createdAt,
    /// gclid, ...) map themselves. Leads already there are skipped; bad rows are reported
    /// with their line and skipped. Imported leads are not sent to lead webhooks, alerts
    /// or platforms until someone rates them. Fails only when no row was imported.
    Import {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        /// The CSV file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Which column fills a field, as FIELD=COLUMN (e.g. `createdAt=Date`); repeat
        /// for more.
        #[arg(long = "map", value_name = "FIELD=COLUMN")]
        map: Vec<String>,
        /// How dates with the year last (15/10/2026, 10/15/2026) are read: `auto` as the
        /// file shows (a first number over 12, or dots, makes them day first; a second over
        /// 12, month first), refusing a date that could be either; or `day-first`, or
        /// `month-first`.
        #[arg(long, value_name = "ORDER", default_value = "auto", value_parser = date_order)]
        date_format: DateOrder,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `--date-format`'s value.
fn date_order(value: &str) -> Result<DateOrder, String> {
    value
        .parse()
        .map_err(|_| "use auto, day-first or month-first".to_owned())
}

/// `inbound ...`: makes, lists or removes.
pub(crate) async fn inbound_command<S: Admin + LeadStore>(
    store: &S,
    command: InboundCommand,
    links: &Links,
) -> Result<(), Failure> {
    match command {
        InboundCommand::Create {
            project: id,
            preset,
            name,
            secret,
            map,
            json,
        } => {
            let project = project(store, &id).await?;
            let overrides = parse_mapping(map.iter().map(String::as_str)).map_err(Failure)?;
            let secret = secret
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty());
            let generated = secret.is_none();
            let mut hook = InboundHook::new(project.id, (&name, preset), secret.map(Secret::new));
            hook.mapping = leadtrack_core::mapping::overridden(&hook.mapping, &overrides);
            store
                .save_inbound_hook(&hook)
                .await
                .map_err(Failure::store)?;
            let saved = ProjectActivity::InboundHookSaved {
                name: hook.name.clone(),
            };
            audit(store, project.id, saved).await?;
            let url = format!("{}{}", links.public_url(), hook.path());
            if json {
                say!(
                    "{}",
                    json!({"id": hook.id, "url": url, "secret": hook.secret.expose()})
                );
                return Ok(());
            }
            say!(
                "Made inbound webhook {} ({}) for project {}.",
                hook.id,
                preset.title(),
                project.public_id
            );
            if generated && !preset.secret_in_url() {
                say!(
                    "Signing secret (give it to the tool): {}",
                    hook.secret.expose()
                );
            }
            say!("{url}");
            Ok(())
        }
        InboundCommand::List(ProjectListing { project: id, json }) => {
            let project = project(store, &id).await?;
            let hooks = store
                .inbound_hooks(project.id)
                .await
                .map_err(Failure::store)?;
            list(&project, &hooks, json);
            Ok(())
        }
        InboundCommand::Remove {
            project: id,
            id: hook,
        } => {
            let project = project(store, &id).await?;
            let hooks = store
                .inbound_hooks(project.id)
                .await
                .map_err(Failure::store)?;
            let Some(found) = hooks.iter().find(|h| h.id == hook) else {
                return Err(Failure(format!(
                    "project {} has no inbound webhook {hook}",
                    project.public_id
                )));
            };
            store
                .remove_inbound_hook(project.id, &hook)
                .await
                .map_err(Failure::store)?;
            let removed = ProjectActivity::InboundHookRemoved {
                name: found.name.clone(),
            };
            audit(store, project.id, removed).await?;
            say!("Removed inbound webhook {hook}: its posts are refused from now on.");
            Ok(())
        }
    }
}

/// Prints the webhooks, with their mappings and without their secrets.
fn list(project: &Project, hooks: &[InboundHook], json: bool) {
    if json {
        let listed: Vec<Value> = hooks
            .iter()
            .map(|hook| {
                json!({"id": hook.id, "name": hook.name, "preset": hook.preset,
                       "createdAt": format(&hook.created_at),
                       "mapping": hook.mapping.iter().map(pair).collect::<Vec<_>>()})
            })
            .collect();
        say!("{}", Value::Array(listed));
    } else if hooks.is_empty() {
        say!(
            "Project {} has no inbound webhooks; `server inbound create` makes one.",
            project.public_id
        );
    } else {
        for hook in hooks {
            say!("{}  {}  ({})", hook.id, hook.name, hook.preset.title());
        }
    }
}

/// A mapping pair as the command line writes it.
fn pair(pair: &FieldMap) -> String {
    format!("{}={}", pair.target, pair.source)
}

/// `lead ...`.
pub(crate) async fn lead_command<S: Admin + LeadStore>(
    store: &S,
    command: LeadCommand,
) -> Result<(), Failure> {
    let LeadCommand::Import {
        project: id,
        file,
        map,
        date_format,
        json,
    } = command;
    let project = project(store, &id).await?;
    let overrides = map
        .iter()
        .map(|pair| FieldMap::parse(pair))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure)?;
    let bytes = std::fs::read(&file)
        .map_err(|err| Failure(format!("{} cannot be read: {err}", file.display())))?;
    let read = ImportFile::read(bytes, &overrides)
        .map_err(Failure)?
        .with_date_order(date_format);
    let rows = read.rows();
    let mut progress = |done: usize| {
        if !json {
            eprintln!("{done} of {rows} rows read");
        }
    };
    let (counts, bad) = store
        .import_file(project.id, &read, &mut progress)
        .await
        .map_err(Failure::store)?;
    let name = file_name(&file);
    let imported = ProjectActivity::LeadsImported {
        file: name.clone(),
        imported: counts.imported,
        duplicates: counts.duplicates,
        bad: bad.len() as u64,
    };
    audit(store, project.id, imported).await?;
    report(&name, (counts, &bad), json);
    // A file imported before is no failure; one that held no lead at all is.
    if counts.imported == 0 && counts.duplicates == 0 {
        return Err(Failure(format!("no lead was imported from {name}")));
    }
    Ok(())
}

/// Prints what the import did: each bad row with its line, then the counts.
fn report(name: &str, (counts, bad): (ImportCounts, &[BadRow]), json: bool) {
    if json {
        let rows: Vec<Value> = bad
            .iter()
            .map(|row| json!({"line": row.line, "reason": row.reason}))
            .collect();
        say!(
            "{}",
            json!({"imported": counts.imported, "duplicates": counts.duplicates, "bad": rows})
        );
        return;
    }
    for row in bad {
        say!("line {}: {}", row.line, row.reason);
    }
    say!(
        "Imported {} leads from {name}; {} were already there; {} bad rows skipped.",
        counts.imported,
        counts.duplicates,
        bad.len()
    );
}

/// The file's name, for the audit log.
fn file_name(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
