//! The storage abstraction: one trait per consumer, and the errors they share. Nothing of
//! any particular database is in it.
//!
//! - [`LeadStore`]: what the lead routes need (leads, status updates, key authentication,
//!   a lead's jobs);
//! - [`Admin`]: projects, API keys, conversion labels, integrations and lead webhooks, for
//!   the admin commands;
//! - [`JobQueue`]: what the forwarding worker needs;
//! - [`Accounts`]: users, project members, sign-in sessions and the sign-in throttle, for
//!   the dashboard and the user commands;
//! - [`Store`]: all of them, for backends that do everything.
//!
//! One not-found convention holds throughout: a method that names a record (by id, key,
//! identifier or public id) fails with [`StoreError::NotFound`] when there is none; methods
//! returning lists or "maybe" work (a claim, a removal) say "nothing" with an empty list,
//! `None` or `false`. Every method is confined to what its arguments name: operations on a
//! project never see or touch another project's records (another project's lead is simply
//! not found). Times are passed in, so callers and tests control the clock.
//!
//! A backend passes the conformance suite of `leadtrack_core::testkit` (feature `testkit`)
//! before it is used.

pub mod arrival;
pub mod connect;
pub mod correction;
pub mod deletion;
pub mod erasure;
mod error;
pub mod rating;
mod row;
pub mod sql;

use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use strum::VariantArray;

pub use error::{Conflict, Entity, StoreError, StoreResult};
pub use row::{LeadRow, q_text};
pub use sql::Listed;

use crate::account::{
    Actor, Attempts, Device, Member, Membership, NewUser, PasswordHash, Preferences, Session,
    SessionHash, SessionInfo, Throttled, User,
};
use crate::activity::{Attribution, LeadEvent, ProjectActivity, ProjectEvent};
use crate::alert::{AlertPreferences, ChatChannel, ChatKind, QueuedAlert};
use crate::assignment::RoundRobin;
use crate::comment::Comment;
use crate::crm::CrmRecord;
use crate::draft::Draft;
use crate::import::{BadRow, ImportCounts, ImportFile, ImportedLead};
use crate::inbound::InboundHook;
use crate::integration::{IntegrationSettings, Integrations, Secret};
use crate::job::{
    Attempt, ClaimedJob, FormRating, JobRecord, QueueDepths, RetryTarget, StatusChange, Trouble,
    UndoTarget,
};
use crate::key::{ApiKeyInfo, GeneratedKey, KeyHash, KeyRef, NewApiKey};
use crate::label::{ConversionLabel, NewLabel};
use crate::lead::{CreatedLead, LeadData, LeadPage, StoredLead};
use crate::link::{Acceptance, AccountLink, Invitation, LinkHash, NewInvitation};
use crate::next_step::{Coverage, DueStep, NextStep, Reminder};
use crate::oauth::{OAuthGrant, Provider};
use crate::project::{NewProject, Project, ProjectSettings};
use crate::report::{Report, ReportQuery};
use crate::request::{CreateRoute, Cursor, LeadQuery, StatusUpdate};
use crate::roas::{RoasQuery, RoasReport};
use crate::saved_view::{NewSavedView, SavedView};
use crate::source::{ClaimedLeadFetch, FetchOutcome, LeadSource, NewLeadFetch, SourceKind};
use crate::spam::SpamReason;
use crate::spend::{FxRates, SpendPlatform, SpendRow, SpendSource};
use crate::types::{
    IntegrationKind, JobId, LeadId, LeadIdentifier, LeadStatus, ProjectId, Role, UserId,
};
use crate::webhook::{
    ClaimedWebhookEvent, LeadSync, NewWebhook, Webhook, WebhookAttempt, WebhookStatus,
};
use uuid::Uuid;

/// How many rows of a file [`LeadStore::import_file`] writes in one transaction.
pub const IMPORT_BATCH: usize = 2_000;

/// The counts per status a listing's tabs show, in [`LeadStatus`]'s order, from the
/// `(status name, count)` pairs a backend counted; a status it did not find counts 0.
pub fn per_status<S: AsRef<str>>(counted: &[(S, i64)]) -> Vec<(LeadStatus, u64)> {
    LeadStatus::VARIANTS
        .iter()
        .map(|status| {
            let total = counted
                .iter()
                .find(|(name, _)| name.as_ref() == status.as_ref())
                .map_or(0, |(_, total)| *total);
            (*status, u64::try_from(total).unwrap_or_default())
        })
        .collect()
}

/// The one key of `matches`, the keys of a project that a [`KeyRef`] names: not found
/// when there is none, [`Conflict::AmbiguousKey`] when a prefix names several (a hash names
/// one at most). Every backend's `revoke_api_key` picks by it.
pub fn one_key<T>(key: &KeyRef, mut matches: Vec<T>) -> StoreResult<T> {
    match matches.len() {
        0 => Err(StoreError::NotFound(Entity::ApiKey)),
        1 => Ok(matches.remove(0)),
        _ => Err(StoreError::Conflict(Conflict::AmbiguousKey(match key {
            KeyRef::Prefix(prefix) => prefix.clone(),
            KeyRef::Hash(_) => String::new(),
        }))),
    }
}

/// How many leads hold each status, in [`LeadStatus`] order, every status present: the
/// counts of an inbox's tabs.
pub type StatusCounts = Vec<(LeadStatus, u64)>;

/// What the lead routes need: the leads of a project, their status updates and jobs, and
/// finding the project a request speaks for.
#[async_trait]
pub trait LeadStore: Send + Sync + 'static {
    /// Whether the store serves requests: it answers a trivial read, and its schema is the
    /// one this build expects (every migration applied). Readiness checks (`/readyz`) ask
    /// it. Errors: [`StoreError::Unavailable`] while it cannot serve.
    async fn ready(&self) -> StoreResult<()>;

    /// The project of an unrevoked key, found by the key's hash alone: the lookup's cost
    /// depends on the hash, never on how much of a guessed key is right.
    /// Errors: [`Entity::ApiKey`] not found (unknown or revoked).
    async fn authenticate(&self, key: &KeyHash) -> StoreResult<Project>;

    /// The project a browser's `projectId` names. Errors: [`Entity::Project`] not found.
    async fn project_by_public_id(&self, public_id: &str) -> StoreResult<Project>;

    /// Creates a lead as the keyed route does: [`LeadStore::create_lead_via`] with
    /// [`CreateRoute::Server`].
    async fn create_lead(
        &self,
        project: ProjectId,
        data: LeadData,
        now: DateTime<Utc>,
    ) -> StoreResult<CreatedLead> {
        self.create_lead_via(project, CreateRoute::Server, data, now)
            .await
    }

    /// Creates a lead through `route`, recording the route, or, when `data` carries a
    /// `formData.uniqueEventId` that a lead of the project already has, merges `data` into
    /// that lead ([`LeadData::merge`]). Atomic: concurrent creates with one event id and
    /// route make one lead. The lead's history gains `created` or `merged`, and, in the
    /// same transaction, every webhook of the project subscribed to `lead.created` or
    /// `lead.updated` gets the event queued, with a fresh event id.
    ///
    /// Which leads a create may merge into depends on its route, because the browser route
    /// takes no key and anyone can read a page's project id: a
    /// [`CreateRoute::Browser`] create merges only into a lead created through the browser
    /// route, and otherwise creates a new lead (so one event id may name a server lead and
    /// a browser lead); a [`CreateRoute::Server`] create merges into the lead the server
    /// route created, else into the browser route's.
    async fn create_lead_via(
        &self,
        project: ProjectId,
        route: CreateRoute,
        data: LeadData,
        now: DateTime<Utc>,
    ) -> StoreResult<CreatedLead> {
        self.create_screened_lead(project, route, data, None, now)
            .await
    }

    /// Imports past leads ([`crate::import`]): each is created through the keyed route,
    /// dated its `created_at`, with `created` in its history, and announced to no webhook
    /// or alert; a lead already there by [`sql::import_duplicate`] (or earlier in `leads`)
    /// is skipped and counted. Atomic: all of `leads` are written, or none.
    /// Errors: [`Entity::Project`] not found.
    async fn import_leads(
        &self,
        project: ProjectId,
        leads: &[ImportedLead],
    ) -> StoreResult<ImportCounts>;

    /// Imports every row of `file` that is a lead, [`IMPORT_BATCH`] rows per
    /// [`Self::import_leads`] (one transaction each), calling `progress` with the rows
    /// read after each batch; what was imported, and the rows that are not leads.
    async fn import_file(
        &self,
        project: ProjectId,
        file: &ImportFile,
        progress: &mut (dyn FnMut(usize) + Send),
    ) -> StoreResult<(ImportCounts, Vec<BadRow>)> {
        let (mut counts, mut bad) = (ImportCounts::default(), Vec::new());
        let mut batch = Vec::with_capacity(IMPORT_BATCH);
        let mut read = 0;
        for row in file.leads(Utc::now()) {
            read += 1;
            match row {
                Ok(lead) => batch.push(lead),
                Err(row) => bad.push(row),
            }
            if read % IMPORT_BATCH == 0 {
                counts += self.import_leads(project, &batch).await?;
                batch.clear();
                progress(read);
            }
        }
        counts += self.import_leads(project, &batch).await?;
        progress(read);
        Ok((counts, bad))
    }

    /// [`Self::create_lead_via`] for a lead that `spam` names the reason it is spam, if it
    /// is. A new spam lead is created `spam` with its reason, duplicates no lead and is not
    /// announced: its history gains `created`, and no webhook hears of it. A new lead that
    /// is not spam records the lead it duplicates ([`StoredLead::duplicate_of`]). A merge
    /// leaves the lead's status as it is.
    async fn create_screened_lead(
        &self,
        project: ProjectId,
        route: CreateRoute,
        data: LeadData,
        spam: Option<SpamReason>,
        now: DateTime<Utc>,
    ) -> StoreResult<CreatedLead>;

    /// Holds each of `leads` that is `open` as spam ([`SpamReason::Marked`]); its history
    /// gains `spam`, by `by`. The leads held; others are left as they are.
    async fn mark_spam(
        &self,
        project: ProjectId,
        leads: &[LeadId],
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>>;

    /// Finds a lead by id, or the most recently created match of the other identifiers
    /// (ties: the higher id), by the matching rules of [`crate::matching`], preferring a
    /// lead that is not spam to a newer spam one.
    /// Errors: [`Entity::Lead`] not found.
    async fn find_lead(
        &self,
        project: ProjectId,
        identifier: &LeadIdentifier,
    ) -> StoreResult<StoredLead>;

    /// One page of the project's leads matching `query`, and the total count.
    async fn list_leads(&self, project: ProjectId, query: &LeadQuery) -> StoreResult<LeadPage>;

    /// How many of the project's leads match `query`'s filters other than `status`, per
    /// status, in [`LeadStatus`] order, every status present (the counts of an inbox's
    /// tabs, in one pass).
    async fn status_counts(
        &self,
        project: ProjectId,
        query: &LeadQuery,
    ) -> StoreResult<StatusCounts>;

    /// An inbox's page: [`LeadStore::list_leads`] of `query`, with the counts of its tabs,
    /// [`LeadStore::status_counts`] of `tabs` (the page's query, or it with fewer filters),
    /// unless the page's total is only a lower bound (a `q` counted to its bound), past
    /// which its tabs would count too. A backend may find both in one pass over the
    /// matches when `tabs` filters as `query` does.
    async fn inbox_page(
        &self,
        project: ProjectId,
        query: &LeadQuery,
        tabs: &LeadQuery,
    ) -> StoreResult<(LeadPage, Option<StatusCounts>)> {
        let page = self.list_leads(project, query).await?;
        let counts = match page.total_is_lower_bound {
            true => None,
            false => Some(self.status_counts(project, tabs).await?),
        };
        Ok((page, counts))
    }

    /// The distinct values of a column among the project's leads, in order (at most
    /// [`sql::LISTED_VALUES`]): what a filter offers to pick from.
    async fn listed_values(&self, project: ProjectId, listed: Listed) -> StoreResult<Vec<String>>;

    /// The project's leads matching `query`, in its order, read in batches (for exports):
    /// at most `limit` leads, starting strictly after `after` ([`Cursor::after`] the last
    /// lead of the previous batch), or from the first when `None`. `query.limit` and
    /// `query.page` are ignored. A batch is found by its cursor, never by counting, so
    /// reading every batch costs what reading every lead once does.
    async fn export_leads(
        &self,
        project: ProjectId,
        query: &LeadQuery,
        after: Option<&Cursor>,
        limit: u32,
    ) -> StoreResult<Vec<StoredLead>>;

    /// The report of the project's leads created in `query`'s range, counted by the rules
    /// of [`crate::report`] (a [`crate::report::ReportBuilder`]).
    async fn report(&self, project: ProjectId, query: &ReportQuery) -> StoreResult<Report>;

    /// Applies updateLeadStatus atomically. A spam lead is taken out of spam first (a
    /// person judged it real): its reason goes, its history gains `not_spam`, and the lead
    /// webhooks hear `lead.created`. The lead's draft, if it has one, is discarded: a
    /// rating decides ([`crate::draft`]).
    ///
    /// `open`: the lead becomes `open`, `price` and `note` apply, and a job of the lead that
    /// no worker has started is cancelled. A label or `lost`: fails with
    /// [`Conflict::JobPending`] when the lead has an unfinished job; otherwise `price` and
    /// `note` apply, the lead becomes `pending` with the `conversionId` recorded, and the job
    /// of [`crate::rules::plan_conversion`] is queued, due at once, recording `by` as who
    /// rated it. The lead's history gains `reopened` or `rated`, by `by`. The job emits
    /// `lead.converted` or `lead.lost` to the lead webhooks when a worker first takes it
    /// ([`rating::emitted`]).
    ///
    /// Errors: [`Entity::Lead`] or [`Entity::Label`] not found.
    async fn update_status(
        &self,
        project: ProjectId,
        update: &StatusUpdate,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<StatusChange> {
        self.update_status_from(project, update, by, now, None)
            .await
    }

    /// [`Self::update_status`], for a rating made through `form` when one is given: its
    /// job is due only once `form.hold` has passed, it remembers the lead's rating before
    /// it for [`Self::undo`], and a second rating of the lead with the form's token fails
    /// with [`Conflict::AlreadySaved`].
    async fn update_status_from(
        &self,
        project: ProjectId,
        update: &StatusUpdate,
        by: &Actor,
        now: DateTime<Utc>,
        form: Option<FormRating>,
    ) -> StoreResult<StatusChange>;

    /// Undoes the ratings `target` names whose jobs no worker has taken yet: each job is
    /// cancelled, its lead gets back the rating it had before ([`rating::restored`]), and
    /// the lead's history gains `undone`, by `by`. The leads restored, none when every job
    /// had left.
    async fn undo(
        &self,
        project: ProjectId,
        target: UndoTarget,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>>;

    /// For each lead `target` names whose newest job ended with deliveries that failed for
    /// good (at the integration, rated since the time, for an integration), queues the job
    /// of [`rating::retry_of`]: the failed platforms again, with the same conversion; the
    /// lead is `pending` until it ends, and its history gains `retried`, by `by`. A lead
    /// with an unfinished job is left as it is (the 409 rule). The jobs queued.
    async fn retry_failed(
        &self,
        project: ProjectId,
        target: RetryTarget,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<JobId>>;

    /// Corrects a lead's contact details as `correction` says, by the member `by`
    /// ([`correction`]): its row made again, matched again with the person's earlier leads,
    /// the correction in its history and `lead.updated` announced. Returns whether anything
    /// changed. Errors: [`Entity::Lead`] not found, [`StoreError::Invalid`] with the
    /// correction's problem.
    async fn correct_contact(
        &self,
        project: ProjectId,
        lead: LeadId,
        correction: &correction::ContactCorrection,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// A lead's jobs, newest first, with their deliveries and attempts.
    async fn lead_jobs(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<JobRecord>>;

    /// The troubled deliveries ([`crate::job::Delivery::is_troubled`]) of the last job of
    /// each of `leads` that has one, in the order of `leads`.
    async fn lead_troubles(
        &self,
        project: ProjectId,
        leads: &[LeadId],
    ) -> StoreResult<Vec<Trouble>>;

    /// The troubled deliveries of the last jobs of the project's leads, the newest jobs
    /// first, of at most [`crate::job::TROUBLES_LISTED`] jobs.
    async fn troubles(&self, project: ProjectId) -> StoreResult<Vec<Trouble>>;

    /// How many of the project's leads [`LeadStore::troubles`] would list, counted up to
    /// [`crate::job::TROUBLES_LISTED`] jobs, in one read.
    async fn troubled_leads(&self, project: ProjectId) -> StoreResult<u64>;

    /// A lead's history, oldest first (ties in the order recorded).
    async fn lead_activity(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<LeadEvent>>;

    /// The newest rating (with a label or `lost`) in the history of each of `leads` that
    /// has one, as `(lead, event)`: when, and by whom.
    async fn last_ratings(
        &self,
        project: ProjectId,
        leads: &[LeadId],
    ) -> StoreResult<Vec<(LeadId, LeadEvent)>>;

    /// Deletes a lead with everything of it (its history, jobs, deliveries and attempts,
    /// and its webhook events), and records `lead_deleted` in the project's history, by
    /// `by`, in the same transaction. Fails with [`Conflict::JobPending`] while the lead has an unfinished job (a
    /// conversion may be on its way), and [`Entity::Lead`] not found.
    async fn delete_lead(
        &self,
        project: ProjectId,
        lead: LeadId,
        by: &Attribution,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Runs one batch of the project's retention rule ([`crate::project::Retention`]) at
    /// `now`, in one transaction: deletes up to `limit` spam leads older than its spam
    /// retention, then erases old leads (as [`erasure`] erases a person's, by the service)
    /// up to `limit` in all, oldest first, from where the last batch stopped. Records the
    /// run (batches at the same `now` add up). Returns how many leads went; fewer than
    /// `limit` when the rule is done for now (or a delivery of the next old lead is under
    /// way, which the next run takes up).
    async fn erase_expired(
        &self,
        project: ProjectId,
        now: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<u64>;

    /// The leads of the project that erasing the person `who` names would erase (not erased
    /// yet), oldest first.
    async fn person_leads(
        &self,
        project: ProjectId,
        who: &LeadIdentifier,
    ) -> StoreResult<Vec<LeadId>>;

    /// Erases the person `who` names: every lead of the project they match, as
    /// [`erasure`] plans it, in one transaction; the erasure in the project's history, by
    /// `by`. Leads erased before are not counted again. Fails with [`Conflict::JobPending`]
    /// while a worker is delivering a conversion of one of them this moment, and erases
    /// nothing then.
    async fn erase_person(
        &self,
        project: ProjectId,
        who: &LeadIdentifier,
        by: &Attribution,
        now: DateTime<Utc>,
    ) -> StoreResult<erasure::Erased>;

    /// Records an event in the project's history (its audit log), and deletes its events
    /// older than [`crate::activity::audit_retention`] on the way.
    async fn record_project_event(
        &self,
        project: ProjectId,
        by: &Attribution,
        activity: &ProjectActivity,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// The project's own history, newest first: at most `limit` events older than the
    /// event `before` (an id; `None`: from the newest), none older than
    /// [`crate::activity::audit_retention`] at `now`.
    async fn project_history(
        &self,
        project: ProjectId,
        before: Option<i64>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<ProjectEvent>>;

    // ----- assignment ([`crate::assignment`]) -----

    /// Assigns the project's `leads` to `to`, or to nobody, and records `assigned` in the
    /// history of each lead whose assignee changes; returns those leads, in id order.
    /// Errors: [`Entity::Lead`] not found (one of `leads` is not the project's; nothing is
    /// changed), [`Entity::User`] not found (`to` is not a member who may take leads,
    /// [`crate::assignment::may_take`]).
    async fn assign(
        &self,
        project: ProjectId,
        leads: &[LeadId],
        to: Option<UserId>,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>>;

    // ----- comments ([`crate::comment`]) -----

    /// Adds a comment by `author` to the lead (its text checked by
    /// [`crate::comment::comment_text`], else [`StoreError::Invalid`]), and records
    /// `commented` in its history. Errors: [`Entity::Lead`] not found.
    async fn add_comment(
        &self,
        project: ProjectId,
        lead: LeadId,
        author: &Actor,
        text: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment>;

    /// The lead's comments, oldest first.
    async fn comments(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<Comment>>;

    /// Replaces the text of a comment `author` wrote on the lead, and records
    /// `comment_edited`. Errors: [`Entity::Comment`] not found (none, or someone else's);
    /// [`StoreError::Invalid`].
    async fn edit_comment(
        &self,
        project: ProjectId,
        (lead, id): (LeadId, i64),
        author: &Actor,
        text: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment>;

    /// Deletes a comment `author` wrote on the lead, and records `comment_deleted`.
    /// Errors: [`Entity::Comment`] not found (none, or someone else's).
    async fn delete_comment(
        &self,
        project: ProjectId,
        (lead, id): (LeadId, i64),
        author: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    // ----- next steps ([`crate::next_step`]) -----

    /// Sets the lead's next step, in place of any it had, and records `next_step`; or,
    /// with `None`, ends the step it has and records `next_step_done` (nothing, when it
    /// has none). A step set again is reminded of again once due. Errors: [`Entity::Lead`]
    /// not found.
    async fn set_next_step(
        &self,
        project: ProjectId,
        lead: LeadId,
        step: Option<&NextStep>,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// The next steps of those of `leads` that have one (a page of them), in no order.
    async fn next_steps(
        &self,
        project: ProjectId,
        leads: &[LeadId],
    ) -> StoreResult<Vec<(LeadId, NextStep)>>;

    /// The project's steps due before `by` (overdue ones included), soonest first, at most
    /// [`crate::next_step::DUE_LISTED`]; only those of leads assigned to `assignee` when
    /// one is named.
    async fn due_steps(
        &self,
        project: ProjectId,
        by: DateTime<Utc>,
        assignee: Option<UserId>,
    ) -> StoreResult<Vec<DueStep>>;

    /// How many of the project's open leads have a next step.
    async fn next_step_coverage(&self, project: ProjectId) -> StoreResult<Coverage>;

    // ----- drafts ([`crate::draft`]) -----

    /// Keeps `draft` as its lead's draft, in place of any it had. Nothing else changes:
    /// no status, no job. Errors: [`Entity::Lead`] not found in the project.
    async fn save_draft(&self, project: ProjectId, draft: &Draft) -> StoreResult<()>;

    /// Drops the lead's draft; whether it had one.
    async fn discard_draft(&self, project: ProjectId, lead: LeadId) -> StoreResult<bool>;

    /// The project's drafts, oldest first.
    async fn drafts(&self, project: ProjectId) -> StoreResult<Vec<Draft>>;
}

/// Administration: projects, API keys, conversion labels and integrations.
///
/// The rules for the values (project ids, currencies, names) are core's
/// ([`NewProject::validate`], [`ProjectSettings::apply`], [`NewLabel::validate`]); a backend
/// applies them and reports their errors as [`StoreError::Invalid`].
#[async_trait]
pub trait Admin: Send + Sync + 'static {
    // ----- projects -----

    /// Creates a project (active, with [`crate::label::LabelMapping::default_lost`]).
    /// Errors: [`Conflict::ProjectExists`]; [`StoreError::Invalid`] for a bad id or currency.
    async fn create_project(&self, project: NewProject, now: DateTime<Utc>)
    -> StoreResult<Project>;

    /// Every project, oldest first.
    async fn projects(&self) -> StoreResult<Vec<Project>>;

    /// The project with this public id. Errors: [`Entity::Project`] not found.
    async fn project(&self, public_id: &str) -> StoreResult<Project>;

    /// Changes a project's settings. Errors: [`Entity::Project`] not found,
    /// [`StoreError::Invalid`].
    async fn update_project(
        &self,
        project: ProjectId,
        settings: ProjectSettings,
    ) -> StoreResult<Project>;

    /// Activates or deactivates a project; a deactivated project's routes answer 403.
    async fn set_project_active(&self, project: ProjectId, active: bool) -> StoreResult<Project>;

    // ----- API keys -----

    /// Stores a generated key (its hash and prefix only).
    async fn insert_api_key(
        &self,
        project: ProjectId,
        key: &GeneratedKey,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo>;

    /// Generates a key for the project and stores it; the plain key is returned once.
    async fn issue_api_key(
        &self,
        project: ProjectId,
        now: DateTime<Utc>,
    ) -> StoreResult<NewApiKey> {
        let key = GeneratedKey::generate();
        let info = self.insert_api_key(project, &key, now).await?;
        Ok(NewApiKey { key: key.key, info })
    }

    /// The project's keys, revoked ones included, oldest first.
    async fn api_keys(&self, project: ProjectId) -> StoreResult<Vec<ApiKeyInfo>>;

    /// Revokes a key of the project. Errors: [`Entity::ApiKey`] not found,
    /// [`Conflict::AmbiguousKey`].
    async fn revoke_api_key(
        &self,
        project: ProjectId,
        key: &KeyRef,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo>;

    // ----- conversion labels -----

    /// Creates a label. Errors: [`Entity::Project`] not found, [`StoreError::Invalid`].
    async fn create_label(
        &self,
        project: ProjectId,
        label: NewLabel,
        now: DateTime<Utc>,
    ) -> StoreResult<ConversionLabel>;

    /// The project's labels, archived ones too, in the project's order (a new label comes
    /// last).
    async fn labels(&self, project: ProjectId) -> StoreResult<Vec<ConversionLabel>>;

    /// A label of the project. Errors: [`Entity::Label`] not found.
    async fn label(&self, project: ProjectId, id: Uuid) -> StoreResult<ConversionLabel>;

    /// Changes a label of the project: its name, mark-as-done and mapping, by the rules of
    /// [`NewLabel::validate`]. Deliveries made from then on use the new mapping, also those
    /// of jobs already queued. Errors: [`Entity::Label`] not found, [`StoreError::Invalid`].
    async fn update_label(
        &self,
        project: ProjectId,
        id: Uuid,
        label: NewLabel,
    ) -> StoreResult<ConversionLabel>;

    /// Archives a label ([`crate::label`]: no longer offered for rating, kept everywhere
    /// else), or restores it. Errors: [`Entity::Label`] not found.
    async fn set_label_archived(
        &self,
        project: ProjectId,
        id: Uuid,
        archived: bool,
    ) -> StoreResult<ConversionLabel>;

    /// Deletes a label that was never used. Errors: [`Entity::Label`] not found;
    /// [`Conflict::LabelInUse`] when a lead, a conversion job or a draft has it.
    async fn delete_label(&self, project: ProjectId, id: Uuid) -> StoreResult<()>;

    /// Puts the project's labels in `order`, which names each of them once
    /// ([`crate::label::check_order`], else [`StoreError::Invalid`]); answers them in it.
    async fn reorder_labels(
        &self,
        project: ProjectId,
        order: &[Uuid],
    ) -> StoreResult<Vec<ConversionLabel>>;

    // ----- round-robin ([`crate::assignment`]) -----

    /// The project's round-robin rule, if it has one.
    async fn round_robin(&self, project: ProjectId) -> StoreResult<Option<RoundRobin>>;

    /// Sets the project's round-robin rule, or removes it (`None`). A new lead the rule
    /// covers is assigned as it is created ([`crate::assignment::RoundRobin::next`] among
    /// its members who [`crate::assignment::may_take`] leads; unassigned when none may),
    /// and a spam lead when a person takes it out of spam, if nobody has it yet.
    async fn set_round_robin(
        &self,
        project: ProjectId,
        rule: Option<&RoundRobin>,
    ) -> StoreResult<()>;

    // ----- chat channels ([`crate::alert`]) -----

    /// The project's chat channels for new leads, in [`ChatKind`] order.
    async fn chat_channels(&self, project: ProjectId) -> StoreResult<Vec<ChatChannel>>;

    /// Sets the project's channel of `kind` to `url` (checked by
    /// [`crate::alert::webhook_url`] for its form, else [`StoreError::Invalid`]), or removes
    /// it (`None`).
    async fn set_chat_channel(
        &self,
        project: ProjectId,
        kind: ChatKind,
        url: Option<&str>,
    ) -> StoreResult<()>;

    // ----- integrations -----

    /// The grant `provider` gave the project by sign-in, if any.
    async fn oauth_grant(
        &self,
        project: ProjectId,
        provider: Provider,
    ) -> StoreResult<Option<OAuthGrant>>;

    /// Keeps `grant` as the project's grant of its platform, in place of an earlier one, or
    /// forgets `provider`'s (`None`). Errors: [`Entity::Project`] not found.
    async fn set_oauth_grant(
        &self,
        project: ProjectId,
        provider: Provider,
        grant: Option<&OAuthGrant>,
    ) -> StoreResult<()>;

    /// The project's lead source of `kind`, if it set one up.
    async fn lead_source(
        &self,
        project: ProjectId,
        kind: SourceKind,
    ) -> StoreResult<Option<LeadSource>>;

    /// The projects whose `kind` source the platform names `routing` (a Meta page's id),
    /// with their settings.
    async fn lead_sources_routed(
        &self,
        kind: SourceKind,
        routing: &str,
    ) -> StoreResult<Vec<(ProjectId, LeadSource)>>;

    /// Sets up `source` for the project, in place of an earlier one of its kind, or
    /// removes the project's source of `kind` (`None`). Errors: [`Entity::Project`] not
    /// found.
    async fn set_lead_source(
        &self,
        project: ProjectId,
        kind: SourceKind,
        source: Option<&LeadSource>,
    ) -> StoreResult<()>;

    /// Saves an inbound webhook: creates it, or replaces the name, secret and mapping of
    /// the project's webhook with its id. Errors: [`Entity::Project`] not found;
    /// [`Entity::Webhook`] not found when the id is another project's.
    async fn save_inbound_hook(&self, hook: &InboundHook) -> StoreResult<()>;

    /// The project's inbound webhooks, oldest first.
    async fn inbound_hooks(&self, project: ProjectId) -> StoreResult<Vec<InboundHook>>;

    /// The inbound webhook `id` posts are for, whichever project's it is, with that
    /// project (its spam rules, whether it is active). Errors: [`Entity::Webhook`] not
    /// found.
    async fn inbound_hook(&self, id: &str) -> StoreResult<(InboundHook, Project)>;

    /// Removes the project's inbound webhook `id`; whether there was one.
    async fn remove_inbound_hook(&self, project: ProjectId, id: &str) -> StoreResult<bool>;

    /// The project's connected integrations.
    async fn integrations(&self, project: ProjectId) -> StoreResult<Integrations>;

    /// Connects an integration, or replaces its settings. Errors: [`Entity::Project`] not
    /// found.
    async fn set_integration(
        &self,
        project: ProjectId,
        settings: IntegrationSettings,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Disconnects an integration; `false` when it was not connected.
    async fn remove_integration(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
    ) -> StoreResult<bool>;

    /// The newest delivery attempt of the project's jobs to each integration (the latest
    /// `at`; ties: the one recorded last), in [`IntegrationKind`] order. An integration
    /// never tried has none, connected or not.
    async fn last_attempts(&self, project: ProjectId) -> StoreResult<Vec<Attempt>>;
}

/// Lead webhooks: the ones added in the dashboard or on the command line, and the REST
/// hooks automation tools subscribe through the API ([`crate::webhook`]).
#[async_trait]
pub trait LeadWebhooks: Send + Sync + 'static {
    /// Adds a webhook to the project; it hears of events from then on.
    /// Errors: [`Entity::Project`] not found; [`StoreError::Invalid`] for what
    /// [`NewWebhook::validate`] refuses, or when the project has
    /// [`crate::webhook::MAX_WEBHOOKS`] already.
    async fn create_webhook(
        &self,
        project: ProjectId,
        webhook: NewWebhook,
        now: DateTime<Utc>,
    ) -> StoreResult<Webhook>;

    /// The project's webhooks, oldest first (ties: in the order added), with how their
    /// deliveries stand.
    async fn webhooks(&self, project: ProjectId) -> StoreResult<Vec<WebhookStatus>>;

    /// Removes a webhook of the project, and the events not yet delivered to it (and, for
    /// a CRM sync, what it recorded of each lead); `false` when the project has no such
    /// webhook.
    async fn remove_webhook(&self, project: ProjectId, id: Uuid) -> StoreResult<bool>;

    /// Changes the project's webhook `id` to `webhook`'s address, secret, events and
    /// options, keeping its id, the events waiting for it and what it recorded of each lead
    /// (so a CRM sync given a new token still moves the deals it made). Errors:
    /// [`Entity::Webhook`] not found when the project has no such webhook of `webhook`'s
    /// kind; [`StoreError::Invalid`] for what [`NewWebhook::validate`] refuses.
    async fn update_webhook(
        &self,
        project: ProjectId,
        id: Uuid,
        webhook: NewWebhook,
    ) -> StoreResult<Webhook>;

    /// How `lead` stands in each CRM the project syncs to, in the order they were
    /// connected.
    async fn lead_syncs(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<LeadSync>>;

    /// What the CRM of sync `webhook` calls `lead`: empty when nothing is recorded.
    async fn crm_record(&self, webhook: Uuid, lead: LeadId) -> StoreResult<CrmRecord>;

    /// Records what the CRM of sync `webhook` calls `lead`, replacing what was recorded.
    async fn save_crm_record(
        &self,
        webhook: Uuid,
        lead: LeadId,
        record: &CrmRecord,
    ) -> StoreResult<()>;
}

/// The queues the forwarding worker drives: conversion jobs, and lead webhook events. Both
/// are leased: every operation on a claimed job or event presents the lease it was claimed
/// with.
#[async_trait]
pub trait JobQueue: Send + Sync + 'static {
    /// Claims the job due soonest (a queued job due by `now`, or a running job whose lease
    /// lapsed) with a lease lasting `lease_for`; `None` when nothing is due.
    async fn claim_job(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedJob>>;

    /// Waits until work may have been queued, by any process, or for `at_most`, whichever
    /// comes first, and returns `true`; the worker calls it when it found nothing due, so
    /// that a delivery starts as soon as its job is queued. A backend that cannot hear of
    /// new work returns `false` at once (the default), and the worker sleeps `at_most`.
    async fn wait_for_work(&self, at_most: std::time::Duration) -> bool {
        let _ = at_most;
        false
    }

    /// How many conversion jobs and lead webhook events wait and run, and how long the
    /// first due of each has been due at `now`.
    async fn queue_depth(&self, now: DateTime<Utc>) -> StoreResult<QueueDepths>;

    /// Records a delivery attempt, moves the delivery to the attempt's
    /// [`crate::types::AttemptOutcome::delivery_state`], and adds a `delivery` event to the
    /// lead's history. Errors: [`Conflict::LeaseLost`].
    async fn record_attempt(&self, job: JobId, lease: Uuid, attempt: &Attempt) -> StoreResult<()>;

    /// Returns a claimed job to the queue, due at `due_at`, releasing the lease.
    /// Errors: [`Conflict::LeaseLost`].
    async fn reschedule_job(
        &self,
        job: JobId,
        lease: Uuid,
        due_at: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Ends a job whose deliveries have all ended, and moves its lead to the job's final
    /// status, unless the lead was reset to `open` meanwhile. Returns the lead's status.
    /// Errors: [`Conflict::LeaseLost`].
    async fn finish_job(
        &self,
        job: JobId,
        lease: Uuid,
        now: DateTime<Utc>,
    ) -> StoreResult<LeadStatus>;

    /// Takes up to `limit` alerts from the queue, oldest first, for the alert worker: each
    /// is taken once (a store queues one in the write that makes it due: see
    /// [`crate::alert`]), so two workers never send the same alert.
    async fn take_alerts(&self, limit: u32) -> StoreResult<Vec<QueuedAlert>>;

    /// Takes up to `limit` next steps that have fallen due at `now` and were not reminded
    /// of yet, soonest first, for the alert worker: each is taken once (until it is set
    /// again), so two workers never send the same reminder.
    async fn take_reminders(&self, now: DateTime<Utc>, limit: u32) -> StoreResult<Vec<Reminder>>;

    /// Keeps the refresh token a platform issued (Microsoft's rotate with each use) in
    /// place of `old` in the project's `kind` integration, by
    /// [`crate::integration::IntegrationSettings::rotate_refresh_token`]: nothing changes
    /// when the integration is gone or holds another token by now. Whether it replaced.
    async fn rotate_refresh_token(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
        old: &Secret,
        new: Secret,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Queues fetching a lead a platform announced, due at `now`, unless the project has
    /// it queued or fetched already (the same kind and id); whether it queued.
    async fn queue_lead_fetch(
        &self,
        project: ProjectId,
        fetch: &NewLeadFetch,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Claims the lead fetch due soonest (queued and due by `now`, or claimed by a fetcher
    /// whose lease lapsed) with a lease lasting `lease_for`; `None` when nothing is due.
    async fn claim_lead_fetch(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedLeadFetch>>;

    /// Ends a claimed fetch as `outcome` says, releasing the lease: done, or due again.
    /// Errors: [`Conflict::FetchLeaseLost`].
    async fn finish_lead_fetch(
        &self,
        id: i64,
        lease: Uuid,
        outcome: &FetchOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Claims the webhook event delivery due soonest (a queued one due by `now`, or one
    /// whose lease lapsed) with a lease lasting `lease_for`, of a webhook that posts (not
    /// a CRM sync's: [`claim_sync_events`](Self::claim_sync_events)); `None` when nothing
    /// is due. Each pair of webhook and event id is one delivery, claimed by one worker at
    /// a time.
    async fn claim_webhook_event(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedWebhookEvent>>;

    /// Claims the due deliveries of one CRM sync that no worker holds: of the sync whose
    /// delivery is due soonest, up to [`claimed_together`](crate::webhook::WebhookKind::claimed_together) of them, in the
    /// order their events happened, under one lease. A sync's events thus go to one worker
    /// at a time, across processes, and reach the CRM in order; empty when none is due.
    /// [`claim_webhook_event`](Self::claim_webhook_event) claims no sync's events.
    async fn claim_sync_events(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Vec<ClaimedWebhookEvent>>;

    /// Records an attempt on a claimed webhook event delivery and releases the lease: a
    /// retry is queued again, due at its `retry_at`; any other outcome ends the delivery.
    /// Errors: [`Conflict::WebhookLeaseLost`]; [`Entity::Webhook`] not found when the
    /// delivery is gone (its webhook was removed).
    async fn record_webhook_attempt(
        &self,
        id: i64,
        lease: Uuid,
        attempt: &WebhookAttempt,
    ) -> StoreResult<()>;
}

/// Team accounts: users, their memberships of projects, sign-in sessions and failed
/// sign-ins.
///
/// A project that has an owner keeps one: removing or demoting its last owner fails and
/// changes nothing, so the project cannot lose the people who manage it. (A project starts
/// with no members; adding an owner is always possible.)
///
/// The rules (email and password checks, hashing, session lifetimes, the throttle) are
/// core's ([`crate::account`]); a store keeps what they produce.
#[async_trait]
pub trait Accounts: Send + Sync + 'static {
    // ----- users -----

    /// Creates a user. Errors: [`Conflict::UserExists`] when the email, in any case, is
    /// taken.
    async fn create_user(&self, user: NewUser, now: DateTime<Utc>) -> StoreResult<User>;

    /// Every user, oldest first.
    async fn users(&self) -> StoreResult<Vec<User>>;

    /// The user with this email, in any case. Errors: [`Entity::User`] not found.
    async fn user_by_email(&self, email: &str) -> StoreResult<User>;

    /// The user's password hash, for sign-in. Errors: [`Entity::User`] not found.
    async fn password_hash(&self, user: UserId) -> StoreResult<PasswordHash>;

    /// Replaces the user's password hash and ends all their sessions.
    /// Errors: [`Entity::User`] not found.
    async fn set_password(&self, user: UserId, hash: &PasswordHash) -> StoreResult<()>;

    /// Disables or enables a user; disabling ends all their sessions.
    /// Errors: [`Entity::User`] not found.
    async fn set_user_disabled(&self, user: UserId, disabled: bool) -> StoreResult<User>;

    /// Replaces the user's dashboard preferences. Errors: [`Entity::User`] not found.
    async fn set_preferences(&self, user: UserId, preferences: &Preferences) -> StoreResult<()>;

    /// Renames the user (the name checked by [`crate::account::validate_name`]).
    /// Errors: [`Entity::User`] not found.
    async fn set_name(&self, user: UserId, name: &str) -> StoreResult<User>;

    // ----- links about an account ([`crate::link`]) -----

    /// Makes `link` for the user, found later by `hash`, replacing any earlier link of its
    /// kind. Errors: [`Entity::User`] not found.
    async fn issue_link(
        &self,
        user: UserId,
        link: &AccountLink,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Makes `link` as [`Accounts::issue_link`] does, unless the user's link of its kind
    /// was made after `since` and is still there: that one is kept, and this one not made.
    /// Whether it was made. Errors: [`Entity::User`] not found.
    async fn issue_link_unless_recent(
        &self,
        user: UserId,
        link: &AccountLink,
        hash: &LinkHash,
        now: DateTime<Utc>,
        since: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Takes a live password-reset link: sets the password and ends every session of its
    /// user. Errors: [`Entity::Link`] not found (unknown, used, replaced or expired).
    async fn reset_password(
        &self,
        hash: &LinkHash,
        password: &PasswordHash,
        now: DateTime<Utc>,
    ) -> StoreResult<User>;

    /// Takes a live email-change link: the email it holds becomes its user's.
    /// Errors: [`Entity::Link`] not found; [`Conflict::UserExists`] when another user has
    /// taken that email since (the link is then left as it was).
    async fn confirm_email(&self, hash: &LinkHash, now: DateTime<Utc>) -> StoreResult<User>;

    // ----- invitations ([`crate::link`]) -----

    /// Invites someone to the project with a link found by `hash`. A pending invitation of
    /// the same email (in any case) is renewed instead: its role and link are replaced.
    /// Errors: [`Entity::Project`] not found.
    async fn invite(
        &self,
        project: ProjectId,
        invitation: &NewInvitation,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<Invitation>;

    /// The project's pending invitations (expired ones too: they can be sent again), newest
    /// first.
    async fn invitations(&self, project: ProjectId) -> StoreResult<Vec<Invitation>>;

    /// Gives a pending invitation a new link, found by `hash`, lasting from `now`.
    /// Errors: [`Entity::Invitation`] not found.
    async fn renew_invitation(
        &self,
        project: ProjectId,
        id: i64,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<Invitation>;

    /// Revokes a pending invitation: its link no longer works. Errors:
    /// [`Entity::Invitation`] not found.
    async fn revoke_invitation(&self, project: ProjectId, id: i64) -> StoreResult<Invitation>;

    /// The invitation whose link is live at `now`, and its project. Errors:
    /// [`Entity::Invitation`] not found (unknown, taken, revoked, renewed or expired).
    async fn invitation(
        &self,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<(Invitation, Project)>;

    /// Takes a live invitation, once: creates the new account, or checks that the existing
    /// user has the invitation's email, and makes them a member with its role (a member
    /// already keeps their role). Errors: [`Entity::Invitation`] not found;
    /// [`Conflict::UserExists`] for a new account whose email is taken; [`StoreError::Invalid`]
    /// when the account's email is not the invitation's.
    async fn accept_invitation(
        &self,
        hash: &LinkHash,
        account: Acceptance,
        now: DateTime<Utc>,
    ) -> StoreResult<(User, Project)>;

    // ----- saved views -----

    /// Saves `view` in the project for `owner`, or for the team when it is shared,
    /// replacing the view of that name there (its owner becomes `owner`).
    async fn save_view(
        &self,
        project: ProjectId,
        owner: UserId,
        view: &NewSavedView,
        now: DateTime<Utc>,
    ) -> StoreResult<SavedView>;

    /// The project's views `user` sees: their own, by name, then the shared ones, by name.
    async fn saved_views(&self, project: ProjectId, user: UserId) -> StoreResult<Vec<SavedView>>;

    /// Deletes one of the project's views; `false` when it has none with this id.
    async fn delete_view(&self, project: ProjectId, id: i64) -> StoreResult<bool>;

    // ----- members -----

    /// Makes the user a member of the project with `role`, or changes their role.
    /// Errors: [`Entity::Project`] or [`Entity::User`] not found; [`Conflict::LastOwner`]
    /// when it would demote the project's last owner.
    async fn add_member(
        &self,
        project: ProjectId,
        user: UserId,
        role: Role,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// Sets what a member of the project is alerted of. Errors: [`Entity::User`] not found
    /// (not a member).
    async fn set_alerts(
        &self,
        project: ProjectId,
        user: UserId,
        alerts: &AlertPreferences,
    ) -> StoreResult<()>;

    /// Lets a member of the project export its leads, or no longer
    /// ([`crate::account::may_export`]). Errors: [`Entity::User`] not found when they are
    /// not a member.
    async fn set_export(&self, project: ProjectId, user: UserId, allowed: bool) -> StoreResult<()>;

    /// Ends the user's membership; `false` when they were not a member.
    /// Errors: [`Conflict::LastOwner`] when they are the project's last owner.
    async fn remove_member(&self, project: ProjectId, user: UserId) -> StoreResult<bool>;

    /// The project's members, oldest membership first.
    async fn members(&self, project: ProjectId) -> StoreResult<Vec<Member>>;

    /// The projects the user is a member of, oldest project first.
    async fn memberships(&self, user: UserId) -> StoreResult<Vec<Membership>>;

    /// The user's membership of the project with this public id. Errors:
    /// [`Entity::Project`] not found, also when the project exists but the user is not a
    /// member, so that ids cannot be probed.
    async fn membership(&self, user: UserId, public_id: &str) -> StoreResult<Membership>;

    // ----- sessions -----

    /// Starts a session for the user at `now`, found later by `hash`. A disabled user gets
    /// a session that is never found (so re-enabling them revives nothing); sign-in refuses
    /// them before this anyway. Errors: [`Entity::User`] not found.
    async fn create_session(
        &self,
        user: UserId,
        hash: &SessionHash,
        device: &Device,
        now: DateTime<Utc>,
    ) -> StoreResult<Session>;

    /// The user's sessions live at `now`, the most recently used first.
    async fn sessions(&self, user: UserId, now: DateTime<Utc>) -> StoreResult<Vec<SessionInfo>>;

    /// Ends every session of the user but `keep`; how many ended.
    async fn end_other_sessions(&self, user: UserId, keep: &SessionHash) -> StoreResult<u64>;

    /// The session with this hash and its user, if it is live at `now`
    /// ([`Session::is_live`]) and the user is enabled. Errors: [`Entity::Session`] not
    /// found (unknown, ended or expired).
    async fn session(&self, hash: &SessionHash, now: DateTime<Utc>)
    -> StoreResult<(User, Session)>;

    /// Marks the session used at `now`.
    async fn touch_session(&self, hash: &SessionHash, now: DateTime<Utc>) -> StoreResult<()>;

    /// Ends every session of the user (signing out signs out everywhere); a user with no
    /// session is no error.
    async fn end_sessions(&self, user: UserId) -> StoreResult<()>;

    // ----- the throttles ([`crate::account::Throttle`]) -----

    /// Records an attempt of `what` for the email (compared by
    /// [`crate::account::email_key`]) from the client address; forgets those older than a
    /// day.
    async fn record_throttled(
        &self,
        what: Throttled,
        email: &str,
        address: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// The attempts of `what` for the email and from the address since `since`, oldest
    /// first.
    async fn throttled_attempts(
        &self,
        what: Throttled,
        email: &str,
        address: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Attempts>;
}

/// Ad spend, the owner's currency rates, and the report of spend against leads (issue
/// #52).
#[async_trait]
pub trait Spending: Send + Sync + 'static {
    /// Keeps `rows` of the project's spend, each replacing the row of its day, source,
    /// medium, account and campaign ([`SpendRow::key`]); answers how many were kept.
    async fn save_spend(&self, project: ProjectId, rows: &[SpendRow]) -> StoreResult<u64>;

    /// The project's spend of the days `from` to `to` (inclusive), by day.
    async fn spend(
        &self,
        project: ProjectId,
        from: NaiveDate,
        to: NaiveDate,
    ) -> StoreResult<Vec<SpendRow>>;

    /// Replaces the project's spend of `source`'s `account` on the days `from` to `to`
    /// with `rows` (what a platform's report of those days says now); answers how many
    /// were kept.
    async fn replace_spend(
        &self,
        project: ProjectId,
        source: &str,
        account: &str,
        (from, to): (NaiveDate, NaiveDate),
        rows: &[SpendRow],
    ) -> StoreResult<u64>;

    /// The platforms' accounts the project's spend is read from.
    async fn spend_sources(&self, project: ProjectId) -> StoreResult<Vec<SpendSource>>;

    /// Reads `source`'s platform's spend from its account from now on, replacing the
    /// source of that platform kept before (and how its last read went); its access
    /// token, if any, is kept sealed.
    async fn set_spend_source(&self, project: ProjectId, source: &SpendSource) -> StoreResult<()>;

    /// Reads `platform`'s spend no longer (what was read stays).
    async fn remove_spend_source(
        &self,
        project: ProjectId,
        platform: SpendPlatform,
    ) -> StoreResult<()>;

    /// Notes how a read of `platform`'s spend went at `at`: well, or `error`.
    async fn record_spend_sync(
        &self,
        project: ProjectId,
        platform: SpendPlatform,
        at: DateTime<Utc>,
        error: Option<&str>,
    ) -> StoreResult<()>;

    /// The currency rates the project's owner set.
    async fn fx_rates(&self, project: ProjectId) -> StoreResult<FxRates>;

    /// Replaces the project's currency rates.
    async fn set_fx_rates(&self, project: ProjectId, rates: &FxRates) -> StoreResult<()>;

    /// What the range's spend bought: [`crate::roas`]'s report of `query`.
    async fn roas(&self, project: ProjectId, query: &RoasQuery) -> StoreResult<RoasReport>;
}

/// A backend that does everything: the lead routes, administration, the job queue and
/// accounts.
pub trait Store: LeadStore + Admin + LeadWebhooks + JobQueue + Accounts + Spending {}

impl<T: LeadStore + Admin + LeadWebhooks + JobQueue + Accounts + Spending> Store for T {}
