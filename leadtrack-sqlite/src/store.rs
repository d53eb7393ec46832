//! The store traits on [`SqliteStore`]: each method hands its SQL to the writer thread
//! (writes, committed in groups) or to a reader (reads, on a snapshot): `read` for point
//! lookups through an index, `read_heavy` for anything that scans a project's leads. The
//! code lives in the modules named after what they store; each method here is one line of
//! `on_threads!`, saying on which thread it runs and what it calls.

use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use leadtrack_core::account::{
    Actor, Attempts, Device, Member, Membership, NewUser, PasswordHash, Preferences, Session,
    SessionHash, SessionInfo, Throttled, User,
};
use leadtrack_core::activity::{Attribution, LeadEvent, ProjectActivity, ProjectEvent};
use leadtrack_core::alert::{AlertPreferences, ChatChannel, ChatKind, QueuedAlert};
use leadtrack_core::assignment::RoundRobin;
use leadtrack_core::comment::Comment;
use leadtrack_core::crm::CrmRecord;
use leadtrack_core::draft::Draft;
use leadtrack_core::import::{ImportCounts, ImportedLead};
use leadtrack_core::inbound::InboundHook;
use leadtrack_core::integration::{IntegrationSettings, Integrations, Secret};
use leadtrack_core::job::{
    Attempt, ClaimedJob, FormRating, JobRecord, QueueDepths, RetryTarget, StatusChange, Trouble,
    UndoTarget,
};
use leadtrack_core::key::{ApiKeyInfo, GeneratedKey, KeyHash, KeyRef};
use leadtrack_core::label::{ConversionLabel, NewLabel};
use leadtrack_core::lead::{CreatedLead, LeadData, LeadPage, StoredLead};
use leadtrack_core::link::{Acceptance, AccountLink, Invitation, LinkHash, NewInvitation};
use leadtrack_core::next_step::{Coverage, DueStep, NextStep, Reminder};
use leadtrack_core::oauth::{OAuthGrant, Provider};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::report::{Report, ReportQuery};
use leadtrack_core::request::{CreateRoute, Cursor, LeadQuery, StatusUpdate};
use leadtrack_core::roas::{RoasQuery, RoasReport};
use leadtrack_core::saved_view::{NewSavedView, SavedView};
use leadtrack_core::source::{
    ClaimedLeadFetch, FetchOutcome, LeadSource, NewLeadFetch, SourceKind,
};
use leadtrack_core::spam::SpamReason;
use leadtrack_core::spend::{FxRates, SpendPlatform, SpendRow, SpendSource};
use leadtrack_core::store::correction::ContactCorrection;
use leadtrack_core::store::erasure::Erased;
use leadtrack_core::store::{Entity, Listed, StatusCounts};
use leadtrack_core::types::{
    IntegrationKind, JobId, LeadId, LeadIdentifier, LeadStatus, ProjectId, Role, UserId,
};
use leadtrack_core::webhook::{
    ClaimedWebhookEvent, LeadSync, NewWebhook, Webhook, WebhookAttempt, WebhookStatus,
};
use leadtrack_core::{
    Accounts, Admin, JobQueue, LeadStore, LeadWebhooks, Spending, StoreError, StoreResult,
};
use uuid::Uuid;

use crate::fetches;
use crate::keyset;
use crate::lookup;
use crate::rows::Error;
use crate::{
    SqliteStore, accounts, activity, admin, alerts, assignment, comments, drafts, erasure, jobs,
    leads, links, listing, next_steps, report, rows, schema, spend, views, webhooks,
};

/// The store methods that run one function on the writer thread (`write`) or on a reader
/// (`read`, or `read_heavy(project)` for what scans a project's leads), one entry each: the
/// trait method's signature without `&self`, the borrowed arguments the thread needs in
/// their owned form (`[key, by]`, see [`Owned`]), and the call. `with vault` hands the call
/// the store's vault. The methods that do more are written out under `verbatim`.
macro_rules! on_threads {
    (
        impl $trait:ident {
            $(
                $how:ident $(($heavy:ident))? $(with $extra:ident)?
                fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty
                $([$($owned:ident),*])?
                => |$conn:ident| $call:expr;
            )*
        }
        $(verbatim { $($verbatim:tt)* })?
    ) => {
        #[async_trait]
        impl $trait for SqliteStore {
            $(
                async fn $name(&self, $($arg: $ty),*) -> $out {
                    $($(let $owned = Owned::owned($owned);)*)?
                    $(let $extra = self.$extra();)?
                    self.$how($($heavy,)? move |$conn| $call).await
                }
            )*
            $($($verbatim)*)?
        }
    };
}

/// A borrowed argument in the form a thread can take with it: `&T` as its owned `T`, and
/// `Option<&T>` as `Option<T>`.
trait Owned {
    /// The owned form.
    type Out;

    /// The argument, owned.
    fn owned(self) -> Self::Out;
}

impl<T: ToOwned + ?Sized> Owned for &T {
    type Out = T::Owned;

    fn owned(self) -> T::Owned {
        self.to_owned()
    }
}

impl<T: ToOwned + ?Sized> Owned for Option<&T> {
    type Out = Option<T::Owned>;

    fn owned(self) -> Option<T::Owned> {
        self.map(ToOwned::to_owned)
    }
}

on_threads! {
    impl LeadStore {
        read fn authenticate(key: &KeyHash)
            -> StoreResult<Project> [key]
            => |conn| admin::authenticate(conn, &key);
        read fn project_by_public_id(public_id: &str)
            -> StoreResult<Project> [public_id]
            => |conn| admin::project_by_public_id(conn, &public_id);
        write fn mark_spam(project: ProjectId, leads: &[LeadId], by: &Actor, now: DateTime<Utc>)
            -> StoreResult<Vec<LeadId>> [leads, by]
            => |conn| leads::mark_spam(conn, project, &leads, &by, now);
        read fn find_lead(project: ProjectId, identifier: &LeadIdentifier)
            -> StoreResult<StoredLead> [identifier]
            => |conn| lookup::find(conn, project, &identifier);
        read fn listed_values(project: ProjectId, listed: Listed)
            -> StoreResult<Vec<String>>
            => |conn| listing::listed_values(conn, project, listed);
        read_heavy(project) fn status_counts(project: ProjectId, query: &LeadQuery)
            -> StoreResult<Vec<(LeadStatus, u64)>> [query]
            => |conn| { listing::status_counts(conn, project, &query) };
        read_heavy(project) fn report(project: ProjectId, query: &ReportQuery)
            -> StoreResult<Report> [query]
            => |conn| report::report(conn, project, &query);
        write fn update_status_from(
            project: ProjectId,
            update: &StatusUpdate,
            by: &Actor,
            now: DateTime<Utc>,
            form: Option<FormRating>,
        )
            -> StoreResult<StatusChange> [update, by]
            => |conn| jobs::update_status(conn, project, (&update, form), &by, now);
        write fn retry_failed(
            project: ProjectId,
            target: RetryTarget,
            by: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<Vec<JobId>> [by]
            => |conn| jobs::retry_failed(conn, project, target, &by, now);
        write fn undo(project: ProjectId, target: UndoTarget, by: &Actor, now: DateTime<Utc>)
            -> StoreResult<Vec<LeadId>> [by]
            => |conn| jobs::undo(conn, project, target, &by, now);
        read fn lead_jobs(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<JobRecord>>
            => |conn| jobs::lead_jobs(conn, project, lead);
        write fn correct_contact(
            project: ProjectId,
            lead: LeadId,
            correction: &ContactCorrection,
            by: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<bool> [correction, by]
            => |conn| leads::correct_contact(conn, (project, lead), &correction, &by, now);
        read fn lead_troubles(project: ProjectId, leads: &[LeadId])
            -> StoreResult<Vec<Trouble>> [leads]
            => |conn| jobs::lead_troubles(conn, project, &leads);
        read fn troubles(project: ProjectId)
            -> StoreResult<Vec<Trouble>>
            => |conn| jobs::troubles(conn, project);
        read fn troubled_leads(project: ProjectId)
            -> StoreResult<u64>
            => |conn| jobs::troubled_leads(conn, project);
        read fn lead_activity(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<LeadEvent>>
            => |conn| activity::lead_activity(conn, project, lead);
        read fn last_ratings(project: ProjectId, leads: &[LeadId])
            -> StoreResult<Vec<(LeadId, LeadEvent)>> [leads]
            => |conn| activity::last_ratings(conn, project, &leads);
        write fn erase_expired(project: ProjectId, now: DateTime<Utc>, limit: u32)
            -> StoreResult<u64>
            => |conn| erasure::erase_expired(conn, project, now, limit);
        read fn person_leads(project: ProjectId, who: &LeadIdentifier)
            -> StoreResult<Vec<LeadId>> [who]
            => |conn| erasure::person_leads(conn, project, &who);
        write fn delete_lead(project: ProjectId, lead: LeadId, by: &Attribution, now: DateTime<Utc>)
            -> StoreResult<()> [by]
            => |conn| activity::delete_lead(conn, project, lead, &by, now);
        write fn record_project_event(
            project: ProjectId,
            by: &Attribution,
            event: &ProjectActivity,
            now: DateTime<Utc>,
        )
            -> StoreResult<()> [by, event]
            => |conn| activity::record_project_event(conn, project, &by, &event, now);
        read fn project_history(
            project: ProjectId,
            before: Option<i64>,
            limit: u32,
            now: DateTime<Utc>,
        )
            -> StoreResult<Vec<ProjectEvent>>
            => |conn| activity::project_history(conn, project, before, limit, now);
        write fn assign(
            project: ProjectId,
            leads: &[LeadId],
            to: Option<UserId>,
            by: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<Vec<LeadId>> [leads, by]
            => |conn| assignment::assign(conn, (project, &leads), to, &by, now);
        write fn add_comment(
            project: ProjectId,
            lead: LeadId,
            author: &Actor,
            text: &str,
            now: DateTime<Utc>,
        )
            -> StoreResult<Comment> [author, text]
            => |conn| comments::add(conn, (project, lead), &author, &text, now);
        read fn comments(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<Comment>>
            => |conn| comments::list(conn, project, lead);
        write fn edit_comment(
            project: ProjectId,
            comment: (LeadId, i64),
            author: &Actor,
            text: &str,
            now: DateTime<Utc>,
        )
            -> StoreResult<Comment> [author, text]
            => |conn| comments::edit(conn, project, comment, &author, &text, now);
        write fn delete_comment(
            project: ProjectId,
            comment: (LeadId, i64),
            author: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<()> [author]
            => |conn| comments::delete(conn, project, comment, &author, now);
        write fn set_next_step(
            project: ProjectId,
            lead: LeadId,
            step: Option<&NextStep>,
            by: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<()> [step, by]
            => |conn| next_steps::set(conn, (project, lead), step.as_ref(), &by, now);
        read fn next_steps(project: ProjectId, leads: &[LeadId])
            -> StoreResult<Vec<(LeadId, NextStep)>> [leads]
            => |conn| next_steps::of_leads(conn, project, &leads);
        read fn due_steps(project: ProjectId, by: DateTime<Utc>, assignee: Option<UserId>)
            -> StoreResult<Vec<DueStep>>
            => |conn| next_steps::due(conn, project, by, assignee);
        read fn next_step_coverage(project: ProjectId)
            -> StoreResult<Coverage>
            => |conn| next_steps::coverage(conn, project);
        write fn save_draft(project: ProjectId, draft: &Draft)
            -> StoreResult<()> [draft]
            => |conn| drafts::save(conn, project, &draft);
        write fn discard_draft(project: ProjectId, lead: LeadId)
            -> StoreResult<bool>
            => |conn| drafts::discard(conn, project, lead);
        read fn drafts(project: ProjectId)
            -> StoreResult<Vec<Draft>>
            => |conn| drafts::list(conn, project);
    }
    verbatim {
        async fn ready(&self) -> StoreResult<()> {
            self.read(|conn| schema::check_current(conn).map_err(Error::from))
                .await
        }

        async fn create_screened_lead(
            &self,
            project: ProjectId,
            route: CreateRoute,
            data: LeadData,
            spam: Option<SpamReason>,
            now: DateTime<Utc>,
        ) -> StoreResult<CreatedLead> {
            // The row is made here, off the writer thread.
            let row = leads::new_row(data)?;
            self.write(move |conn| leads::create(conn, project, (route, spam), row, now))
                .await
        }

        async fn erase_person(
            &self,
            project: ProjectId,
            who: &LeadIdentifier,
            by: &Attribution,
            now: DateTime<Utc>,
        ) -> StoreResult<Erased> {
            let (who, by) = (who.clone(), by.clone());
            let erased = self
                .write(move |conn| erasure::erase_person(conn, project, &who, &by, now))
                .await?;
            if erased.erased > 0 {
                // The WAL's older frames hold the pages as they were until a checkpoint.
                self.checkpoint().await;
            }
            Ok(erased)
        }

        async fn import_leads(
            &self,
            project: ProjectId,
            leads: &[ImportedLead],
        ) -> StoreResult<ImportCounts> {
            let rows = leads::imported_rows(leads)?;
            self.write(move |conn| leads::import(conn, project, rows))
                .await
        }

        async fn list_leads(&self, project: ProjectId, query: &LeadQuery) -> StoreResult<LeadPage> {
            let query = query.clone();
            let page = self
                .read_heavy(project, move |conn| listing::list(conn, project, &query))
                .await?;
            Ok(page.parse()?)
        }

        async fn inbox_page(
            &self,
            project: ProjectId,
            query: &LeadQuery,
            tabs: &LeadQuery,
        ) -> StoreResult<(LeadPage, Option<StatusCounts>)> {
            let (query, tabs) = (query.clone(), tabs.clone());
            let (page, counts) = self
                .read_heavy(project, move |conn| {
                    listing::inbox_page(conn, project, &query, &tabs)
                })
                .await?;
            Ok((page.parse()?, counts))
        }

        async fn export_leads(
            &self,
            project: ProjectId,
            query: &LeadQuery,
            after: Option<&Cursor>,
            limit: u32,
        ) -> StoreResult<Vec<StoredLead>> {
            let query = query.clone();
            let after = after.cloned();
            let records = self
                .read_heavy(project, move |conn| {
                    keyset::export(conn, project, &query, after.as_ref(), limit)
                })
                .await?;
            Ok(listing::parse(records)?)
        }
    }
}

on_threads! {
    impl Admin {
        write fn create_project(project: NewProject, now: DateTime<Utc>)
            -> StoreResult<Project>
            => |conn| admin::create_project(conn, project, now);
        read fn projects() -> StoreResult<Vec<Project>> => |conn| admin::projects(conn);
        write fn update_project(project: ProjectId, settings: ProjectSettings)
            -> StoreResult<Project>
            => |conn| admin::update_project(conn, project, settings);
        write fn set_project_active(project: ProjectId, active: bool)
            -> StoreResult<Project>
            => |conn| admin::set_project_active(conn, project, active);
        write fn insert_api_key(project: ProjectId, key: &GeneratedKey, now: DateTime<Utc>)
            -> StoreResult<ApiKeyInfo> [key]
            => |conn| admin::insert_api_key(conn, project, &key, now);
        read fn api_keys(project: ProjectId)
            -> StoreResult<Vec<ApiKeyInfo>>
            => |conn| admin::api_keys(conn, project);
        write fn revoke_api_key(project: ProjectId, key: &KeyRef, now: DateTime<Utc>)
            -> StoreResult<ApiKeyInfo> [key]
            => |conn| admin::revoke_api_key(conn, project, &key, now);
        write fn create_label(project: ProjectId, label: NewLabel, now: DateTime<Utc>)
            -> StoreResult<ConversionLabel>
            => |conn| admin::create_label(conn, project, label, now);
        read fn labels(project: ProjectId)
            -> StoreResult<Vec<ConversionLabel>>
            => |conn| admin::labels(conn, project);
        read fn label(project: ProjectId, id: Uuid)
            -> StoreResult<ConversionLabel>
            => |conn| admin::label(conn, project, id);
        write fn update_label(project: ProjectId, id: Uuid, label: NewLabel)
            -> StoreResult<ConversionLabel>
            => |conn| admin::update_label(conn, project, id, label);
        write fn set_label_archived(project: ProjectId, id: Uuid, archived: bool)
            -> StoreResult<ConversionLabel>
            => |conn| admin::set_label_archived(conn, project, id, archived);
        write fn delete_label(project: ProjectId, id: Uuid)
            -> StoreResult<()>
            => |conn| admin::delete_label(conn, project, id);
        write fn reorder_labels(project: ProjectId, order: &[Uuid])
            -> StoreResult<Vec<ConversionLabel>> [order]
            => |conn| admin::reorder_labels(conn, project, &order);
        read with vault fn chat_channels(project: ProjectId)
            -> StoreResult<Vec<ChatChannel>>
            => |conn| alerts::channels(conn, &vault, project);
        read with vault fn oauth_grant(project: ProjectId, provider: Provider)
            -> StoreResult<Option<OAuthGrant>>
            => |conn| admin::oauth_grant(conn, &vault, project, provider);
        write with vault fn set_oauth_grant(
            project: ProjectId,
            provider: Provider,
            grant: Option<&OAuthGrant>,
        )
            -> StoreResult<()> [grant]
            => |conn| { admin::set_oauth_grant(conn, &vault, project, provider, grant.as_ref()) };
        read with vault fn lead_source(project: ProjectId, kind: SourceKind)
            -> StoreResult<Option<LeadSource>>
            => |conn| admin::lead_source(conn, &vault, project, kind);
        read with vault fn lead_sources_routed(kind: SourceKind, routing: &str)
            -> StoreResult<Vec<(ProjectId, LeadSource)>> [routing]
            => |conn| admin::lead_sources_routed(conn, &vault, kind, &routing);
        write with vault fn set_lead_source(
            project: ProjectId,
            kind: SourceKind,
            source: Option<&LeadSource>,
        )
            -> StoreResult<()> [source]
            => |conn| admin::set_lead_source(conn, &vault, project, kind, source.as_ref());
        write with vault fn save_inbound_hook(hook: &InboundHook)
            -> StoreResult<()> [hook]
            => |conn| admin::save_inbound_hook(conn, &vault, &hook);
        read with vault fn inbound_hooks(project: ProjectId)
            -> StoreResult<Vec<InboundHook>>
            => |conn| admin::inbound_hooks(conn, &vault, (Some(project), None));
        write fn remove_inbound_hook(project: ProjectId, id: &str)
            -> StoreResult<bool> [id]
            => |conn| admin::remove_inbound_hook(conn, project, &id);
        write with vault fn set_chat_channel(project: ProjectId, kind: ChatKind, url: Option<&str>)
            -> StoreResult<()> [url]
            => |conn| alerts::set_channel(conn, &vault, project, kind, url.as_deref());
        read fn round_robin(project: ProjectId)
            -> StoreResult<Option<RoundRobin>>
            => |conn| assignment::rule(conn, project);
        write fn set_round_robin(project: ProjectId, rule: Option<&RoundRobin>)
            -> StoreResult<()> [rule]
            => |conn| assignment::set_rule(conn, project, rule.as_ref());
        read with vault fn integrations(project: ProjectId)
            -> StoreResult<Integrations>
            => |conn| admin::integrations(conn, &vault, project);
        write with vault fn set_integration(
            project: ProjectId,
            settings: IntegrationSettings,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |conn| admin::set_integration(conn, &vault, project, settings, now);
        write fn remove_integration(project: ProjectId, kind: IntegrationKind)
            -> StoreResult<bool>
            => |conn| admin::remove_integration(conn, project, kind);
        read fn last_attempts(project: ProjectId)
            -> StoreResult<Vec<Attempt>>
            => |conn| admin::last_attempts(conn, project);
    }
    verbatim {
        async fn project(&self, public_id: &str) -> StoreResult<Project> {
            self.project_by_public_id(public_id).await
        }

        async fn inbound_hook(&self, id: &str) -> StoreResult<(InboundHook, Project)> {
            let (vault, id) = (self.vault(), id.to_owned());
            self.read(move |conn| {
                let found = admin::inbound_hooks(conn, &vault, (None, Some(&id)))?;
                let hook = found
                    .into_iter()
                    .next()
                    .ok_or(StoreError::NotFound(Entity::Webhook))?;
                let project = admin::project(conn, hook.project)?;
                Ok((hook, project))
            })
            .await
        }
    }
}

on_threads! {
    impl JobQueue {
        write with vault fn claim_job(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Option<ClaimedJob>>
            => |conn| jobs::claim(conn, &vault, now, lease_for);
        write fn record_attempt(job: JobId, lease: Uuid, attempt: &Attempt)
            -> StoreResult<()> [attempt]
            => |conn| jobs::record_attempt(conn, job, lease, &attempt);
        write fn reschedule_job(job: JobId, lease: Uuid, due_at: DateTime<Utc>)
            -> StoreResult<()>
            => |conn| jobs::reschedule(conn, job, lease, due_at);
        write fn finish_job(job: JobId, lease: Uuid, now: DateTime<Utc>)
            -> StoreResult<LeadStatus>
            => |conn| jobs::finish(conn, job, lease, now);
        write fn take_alerts(limit: u32)
            -> StoreResult<Vec<QueuedAlert>>
            => |conn| alerts::take(conn, limit);
        write fn take_reminders(now: DateTime<Utc>, limit: u32)
            -> StoreResult<Vec<Reminder>>
            => |conn| next_steps::take(conn, now, limit);
        write with vault fn rotate_refresh_token(
            project: ProjectId,
            kind: IntegrationKind,
            old: &Secret,
            new: Secret,
            now: DateTime<Utc>,
        )
            -> StoreResult<bool> [old]
            => |conn| { admin::rotate_refresh_token(conn, &vault, project, kind, &old, new, now) };
        write fn queue_lead_fetch(project: ProjectId, fetch: &NewLeadFetch, now: DateTime<Utc>)
            -> StoreResult<bool> [fetch]
            => |conn| fetches::queue(conn, project, &fetch, now);
        write fn claim_lead_fetch(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Option<ClaimedLeadFetch>>
            => |conn| fetches::claim(conn, now, lease_for);
        write fn finish_lead_fetch(id: i64, lease: Uuid, outcome: &FetchOutcome, now: DateTime<Utc>)
            -> StoreResult<()> [outcome]
            => |conn| fetches::finish(conn, id, lease, &outcome, now);
        write with vault fn claim_webhook_event(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Option<ClaimedWebhookEvent>>
            => |conn| webhooks::claim(conn, &vault, now, lease_for);
        write with vault fn claim_sync_events(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Vec<ClaimedWebhookEvent>>
            => |conn| webhooks::claim_sync(conn, &vault, now, lease_for);
        write fn record_webhook_attempt(id: i64, lease: Uuid, attempt: &WebhookAttempt)
            -> StoreResult<()> [attempt]
            => |conn| webhooks::record_attempt(conn, id, lease, &attempt);
    }
    verbatim {
        async fn queue_depth(&self, now: DateTime<Utc>) -> StoreResult<QueueDepths> {
            let now_ms = now.timestamp_millis();
            self.read(move |conn| {
                Ok(QueueDepths {
                    jobs: rows::depth(conn, "jobs", now_ms)?,
                    webhook_events: rows::depth(conn, "webhook_events", now_ms)?,
                    lead_fetches: fetches::depth(conn, now_ms)?,
                })
            })
            .await
        }
    }
}

on_threads! {
    impl Accounts {
        write fn create_user(user: NewUser, now: DateTime<Utc>)
            -> StoreResult<User>
            => |conn| accounts::create_user(conn, user, now);
        read fn users() -> StoreResult<Vec<User>> => |conn| accounts::users(conn);
        read fn user_by_email(email: &str)
            -> StoreResult<User> [email]
            => |conn| accounts::user_by_email(conn, &email);
        read fn password_hash(user: UserId)
            -> StoreResult<PasswordHash>
            => |conn| accounts::password_hash(conn, user);
        write fn set_password(user: UserId, hash: &PasswordHash)
            -> StoreResult<()> [hash]
            => |conn| accounts::set_password(conn, user, &hash);
        write fn set_user_disabled(user: UserId, disabled: bool)
            -> StoreResult<User>
            => |conn| accounts::set_user_disabled(conn, user, disabled);
        write fn set_preferences(user: UserId, preferences: &Preferences)
            -> StoreResult<()> [preferences]
            => |conn| accounts::set_preferences(conn, user, &preferences);
        write fn set_name(user: UserId, name: &str)
            -> StoreResult<User> [name]
            => |conn| accounts::set_name(conn, user, &name);
        write fn issue_link(user: UserId, link: &AccountLink, hash: &LinkHash, now: DateTime<Utc>)
            -> StoreResult<()> [link, hash]
            => |conn| links::issue(conn, user, (&link, &hash), now, None).map(|_| ());
        write fn issue_link_unless_recent(
            user: UserId,
            link: &AccountLink,
            hash: &LinkHash,
            now: DateTime<Utc>,
            since: DateTime<Utc>
        )
            -> StoreResult<bool> [link, hash]
            => |conn| links::issue(conn, user, (&link, &hash), now, Some(since));
        write fn reset_password(hash: &LinkHash, password: &PasswordHash, now: DateTime<Utc>)
            -> StoreResult<User> [hash, password]
            => |conn| links::reset_password(conn, &hash, &password, now);
        write fn confirm_email(hash: &LinkHash, now: DateTime<Utc>)
            -> StoreResult<User> [hash]
            => |conn| links::confirm_email(conn, &hash, now);
        write fn invite(
            project: ProjectId,
            invitation: &NewInvitation,
            hash: &LinkHash,
            now: DateTime<Utc>,
        )
            -> StoreResult<Invitation> [invitation, hash]
            => |conn| links::invite(conn, project, &invitation, &hash, now);
        read fn invitations(project: ProjectId)
            -> StoreResult<Vec<Invitation>>
            => |conn| links::invitations(conn, project);
        write fn renew_invitation(project: ProjectId, id: i64, hash: &LinkHash, now: DateTime<Utc>)
            -> StoreResult<Invitation> [hash]
            => |conn| links::renew(conn, project, id, &hash, now);
        write fn revoke_invitation(project: ProjectId, id: i64)
            -> StoreResult<Invitation>
            => |conn| links::revoke(conn, project, id);
        read fn invitation(hash: &LinkHash, now: DateTime<Utc>)
            -> StoreResult<(Invitation, Project)> [hash]
            => |conn| links::find(conn, &hash, now);
        write fn accept_invitation(hash: &LinkHash, account: Acceptance, now: DateTime<Utc>)
            -> StoreResult<(User, Project)> [hash]
            => |conn| links::accept(conn, &hash, &account, now);
        write fn set_alerts(project: ProjectId, user: UserId, alerts: &AlertPreferences)
            -> StoreResult<()> [alerts]
            => |conn| accounts::set_alerts(conn, project, user, &alerts);
        write fn set_export(project: ProjectId, user: UserId, allowed: bool)
            -> StoreResult<()>
            => |conn| accounts::set_export(conn, project, user, allowed);
        write fn save_view(
            project: ProjectId,
            owner: UserId,
            view: &NewSavedView,
            now: DateTime<Utc>,
        )
            -> StoreResult<SavedView> [view]
            => |conn| views::save(conn, project, owner, &view, now);
        read fn saved_views(project: ProjectId, user: UserId)
            -> StoreResult<Vec<SavedView>>
            => |conn| views::list(conn, project, user);
        write fn delete_view(project: ProjectId, id: i64)
            -> StoreResult<bool>
            => |conn| views::delete(conn, project, id);
        write fn add_member(project: ProjectId, user: UserId, role: Role, now: DateTime<Utc>)
            -> StoreResult<()>
            => |conn| accounts::add_member(conn, project, user, role, now);
        write fn remove_member(project: ProjectId, user: UserId)
            -> StoreResult<bool>
            => |conn| accounts::remove_member(conn, project, user);
        read fn members(project: ProjectId)
            -> StoreResult<Vec<Member>>
            => |conn| accounts::members(conn, project);
        read fn memberships(user: UserId)
            -> StoreResult<Vec<Membership>>
            => |conn| accounts::memberships(conn, user);
        read fn membership(user: UserId, public_id: &str)
            -> StoreResult<Membership> [public_id]
            => |conn| accounts::membership_of(conn, user, &public_id);
        write fn create_session(
            user: UserId,
            hash: &SessionHash,
            device: &Device,
            now: DateTime<Utc>,
        )
            -> StoreResult<Session> [hash, device]
            => |conn| accounts::create_session(conn, user, &hash, &device, now);
        read fn sessions(user: UserId, now: DateTime<Utc>)
            -> StoreResult<Vec<SessionInfo>>
            => |conn| accounts::sessions(conn, user, now);
        write fn end_other_sessions(user: UserId, keep: &SessionHash)
            -> StoreResult<u64> [keep]
            => |conn| accounts::end_other_sessions(conn, user, &keep);
        read fn session(hash: &SessionHash, now: DateTime<Utc>)
            -> StoreResult<(User, Session)> [hash]
            => |conn| accounts::session(conn, &hash, now);
        write fn touch_session(hash: &SessionHash, now: DateTime<Utc>)
            -> StoreResult<()> [hash]
            => |conn| accounts::touch_session(conn, &hash, now);
        write fn end_sessions(user: UserId)
            -> StoreResult<()>
            => |conn| accounts::end_sessions_of(conn, user);
        write fn record_throttled(what: Throttled, email: &str, address: &str, now: DateTime<Utc>)
            -> StoreResult<()> [email, address]
            => |conn| accounts::record_throttled(conn, what, &email, &address, now);
        read fn throttled_attempts(what: Throttled, email: &str, address: &str, since: DateTime<Utc>)
            -> StoreResult<Attempts> [email, address]
            => |conn| accounts::throttled_attempts(conn, what, &email, &address, since);
    }
}

on_threads! {
    impl LeadWebhooks {
        write with vault fn create_webhook(
            project: ProjectId,
            webhook: NewWebhook,
            now: DateTime<Utc>,
        )
            -> StoreResult<Webhook>
            => |conn| webhooks::create(conn, &vault, project, webhook, now);
        read with vault fn webhooks(project: ProjectId)
            -> StoreResult<Vec<WebhookStatus>>
            => |conn| webhooks::list(conn, &vault, project);
        write fn remove_webhook(project: ProjectId, id: Uuid)
            -> StoreResult<bool>
            => |conn| webhooks::remove(conn, project, id);
        write with vault fn update_webhook(project: ProjectId, id: Uuid, webhook: NewWebhook)
            -> StoreResult<Webhook>
            => |conn| webhooks::update(conn, &vault, (project, id), webhook);
        read fn lead_syncs(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<LeadSync>>
            => |conn| webhooks::lead_syncs(conn, project, lead);
        read fn crm_record(webhook: Uuid, lead: LeadId)
            -> StoreResult<CrmRecord>
            => |conn| webhooks::crm_record(conn, webhook, lead);
        write fn save_crm_record(webhook: Uuid, lead: LeadId, record: &CrmRecord)
            -> StoreResult<()> [record]
            => |conn| webhooks::save_crm_record(conn, webhook, lead, &record);
    }
}

on_threads! {
    impl Spending {
        write fn save_spend(project: ProjectId, rows: &[SpendRow])
            -> StoreResult<u64> [rows]
            => |conn| spend::save(conn, project, &rows);
        read fn spend(project: ProjectId, from: NaiveDate, to: NaiveDate)
            -> StoreResult<Vec<SpendRow>>
            => |conn| spend::list(conn, project, (from, to));
        write fn replace_spend(
            project: ProjectId,
            source: &str,
            account: &str,
            days: (NaiveDate, NaiveDate),
            rows: &[SpendRow],
        )
            -> StoreResult<u64> [source, account, rows]
            => |conn| spend::replace(conn, project, (&source, &account), days, &rows);
        read with vault fn spend_sources(project: ProjectId)
            -> StoreResult<Vec<SpendSource>>
            => |conn| spend::sources(conn, &vault, project);
        write with vault fn set_spend_source(project: ProjectId, source: &SpendSource)
            -> StoreResult<()> [source]
            => |conn| spend::set_source(conn, &vault, project, &source);
        write fn remove_spend_source(project: ProjectId, platform: SpendPlatform)
            -> StoreResult<()>
            => |conn| spend::remove_source(conn, project, platform);
        write fn record_spend_sync(
            project: ProjectId,
            platform: SpendPlatform,
            at: DateTime<Utc>,
            error: Option<&str>,
        )
            -> StoreResult<()> [error]
            => |conn| spend::record_sync(conn, project, platform, (at, error.as_deref()));
        read fn fx_rates(project: ProjectId)
            -> StoreResult<FxRates>
            => |conn| spend::rates(conn, project);
        write fn set_fx_rates(project: ProjectId, rates: &FxRates)
            -> StoreResult<()> [rates]
            => |conn| spend::set_rates(conn, project, &rates);
        read_heavy(project) fn roas(project: ProjectId, query: &RoasQuery)
            -> StoreResult<RoasReport> [query]
            => |conn| spend::roas(conn, project, &query);
    }
}
