//! `privacy ...`: a person's requests about their data, answered from the command line as
//! `POST /api/privacy/erase` and `GET /api/privacy/export` answer them (docs/privacy.md).

use chrono::Utc;
use clap::{Args, Subcommand};
use leadtrack_core::activity::Attribution;
use leadtrack_core::store::erasure::Erased;
use leadtrack_core::types::{LeadId, LeadIdentifier};
use leadtrack_core::{Admin, LeadStore};

use crate::Failure;
use crate::admin::{print_json, project};

/// `privacy ...`
#[derive(Debug, Subcommand)]
pub(crate) enum PrivacyCommand {
    /// Erase a person: every lead of the project their email or phone matches (as
    /// duplicates are matched), or one lead, loses its personal data everywhere it is kept;
    /// an anonymous record stays, so reports keep their counts. Prints what platforms and
    /// webhooks received of them before, which they keep.
    Erase {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        #[command(flatten)]
        person: Person,
        /// Print the outcome as JSON, as the API answers it.
        #[arg(long)]
        json: bool,
    },
    /// Print everything the project keeps about a person as one JSON document: each of
    /// their leads with its history, comments and conversions (what was sent where, when).
    Export {
        /// The public project id.
        #[arg(long, value_name = "ID")]
        project: String,
        #[command(flatten)]
        person: Person,
    },
}

/// Who a request is about: exactly one of these.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct Person {
    /// Their email.
    #[arg(long, value_name = "EMAIL")]
    email: Option<String>,
    /// Their phone number.
    #[arg(long, value_name = "NUMBER")]
    phone: Option<String>,
    /// One lead, by its id.
    #[arg(long = "lead", value_name = "ID")]
    lead: Option<i64>,
    /// The `uniqueIdentifier` their leads were sent with.
    #[arg(long, value_name = "ID")]
    unique_identifier: Option<String>,
}

impl Person {
    fn identifier(self) -> Option<LeadIdentifier> {
        let Self {
            email,
            phone,
            lead,
            unique_identifier,
        } = self;
        lead.map(|id| LeadIdentifier::LeadId(LeadId(id)))
            .or(unique_identifier.map(LeadIdentifier::UniqueIdentifier))
            .or(email.map(LeadIdentifier::Email))
            .or(phone.map(LeadIdentifier::Phone))
    }
}

/// `privacy ...`
pub(crate) async fn privacy_command<S: Admin + LeadStore>(
    store: &S,
    command: PrivacyCommand,
) -> Result<(), Failure> {
    let (id, person, json) = match command {
        PrivacyCommand::Erase {
            project,
            person,
            json,
        } => (project, person, Some(json)),
        PrivacyCommand::Export { project, person } => (project, person, None),
    };
    let project = project(store, &id).await?;
    let who = person.identifier().ok_or_else(|| {
        Failure("name the person: --email, --phone, --lead or --unique-identifier".to_owned())
    })?;
    let Some(json) = json else {
        let export = leadtrack_core::privacy::export(store, &project, &who, Utc::now())
            .await
            .map_err(Failure::store)?;
        print_json(&serde_json::to_value(&export).unwrap_or_default());
        return Ok(());
    };
    let erased = store
        .erase_person(project.id, &who, &Attribution::admin(), Utc::now())
        .await
        .map_err(Failure::store)?;
    match json {
        true => print_json(&serde_json::to_value(&erased).unwrap_or_default()),
        false => say!("{}", in_words(&erased)),
    }
    Ok(())
}

/// What an erasure did, for people.
fn in_words(erased: &Erased) -> String {
    if erased.erased == 0 {
        return "Nothing to erase: no lead of this project holds the person's data.".to_owned();
    }
    let ids: Vec<String> = erased.lead_ids.iter().map(|id| format!("#{id}")).collect();
    let leads = match erased.erased {
        1 => "1 lead".to_owned(),
        n => format!("{n} leads"),
    };
    let mut words = format!("Erased {leads} ({}).", ids.join(", "));
    if !erased.sent_to.is_empty() {
        let sent: Vec<String> = erased
            .sent_to
            .iter()
            .map(|sent| format!("{} {}", sent.destination, sent.delivered))
            .collect();
        words.push_str(&format!(
            " Delivered before, and kept by their receivers: {}.",
            sent.join(", ")
        ));
    }
    words
}
