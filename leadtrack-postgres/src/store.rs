//! The store traits on [`PgStore`]: a write runs in a transaction (`transaction!`, retried
//! on a serialisation failure or deadlock), a read on a pooled connection (`read!`). The
//! code lives in the modules named after what they store; each method that is one call is
//! one entry of `on_pool!`.

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
use leadtrack_core::store::{Entity, LeadRow, Listed};
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

use crate::{
    PgStore, accounts, activity, admin, alerts, assignment, comments, drafts, erasure, fetches,
    jobs, keyset, leads, links, listing, lookup, next_steps, report, schema, spend, transaction,
    views, webhooks,
};

/// Runs `$body` on a pooled connection (`$c` names it in the body, a future of a
/// `Result<_, Error>`), converting the error.
macro_rules! read {
    ($store:expr, |$c:ident| $body:expr) => {{
        let result: Result<_, crate::Error> = async {
            let client = $store.client().await?;
            let $c = &client;
            $body.await
        }
        .await;
        result.map_err(StoreError::from)
    }};
}

/// The store methods that are one call, on a pooled connection (`read`) or in a transaction
/// (`transaction`), one entry each: the trait method's signature without `&self`, and the
/// call. `with vault` hands the call the store's vault. The methods that do more are
/// written out under `verbatim`.
macro_rules! on_pool {
    (
        impl $trait:ident {
            $(
                $how:ident $(with $extra:ident)?
                fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty
                => |$c:ident| $call:expr;
            )*
        }
        $(verbatim { $($verbatim:tt)* })?
    ) => {
        #[async_trait]
        impl $trait for PgStore {
            $(
                async fn $name(&self, $($arg: $ty),*) -> $out {
                    $(let $extra = &self.$extra;)?
                    $how!(self, |$c| $call)
                }
            )*
            $($($verbatim)*)?
        }
    };
}

on_pool! {
    impl LeadStore {
        read fn ready() -> StoreResult<()> => |c| schema::check_current(c);
        read fn authenticate(key: &KeyHash)
            -> StoreResult<Project>
            => |c| admin::authenticate(c, key);
        read fn project_by_public_id(public_id: &str)
            -> StoreResult<Project>
            => |c| admin::project_by_public_id(c, public_id);
        read fn find_lead(project: ProjectId, identifier: &LeadIdentifier)
            -> StoreResult<StoredLead>
            => |c| lookup::find(c, project, identifier);
        read fn listed_values(project: ProjectId, listed: Listed)
            -> StoreResult<Vec<String>>
            => |c| listing::listed_values(c, project, listed);
        read fn status_counts(project: ProjectId, query: &LeadQuery)
            -> StoreResult<Vec<(LeadStatus, u64)>>
            => |c| listing::status_counts(c, project, query);
        read fn export_leads(
            project: ProjectId,
            query: &LeadQuery,
            after: Option<&Cursor>,
            limit: u32,
        )
            -> StoreResult<Vec<StoredLead>>
            => |c| keyset::export(c, project, query, after, limit);
        read fn report(project: ProjectId, query: &ReportQuery)
            -> StoreResult<Report>
            => |c| report::report(c, project, query);
        transaction fn undo(project: ProjectId, target: UndoTarget, by: &Actor, now: DateTime<Utc>)
            -> StoreResult<Vec<LeadId>>
            => |tx| jobs::undo(&tx, project, target, by, now).await?;
        read fn lead_jobs(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<JobRecord>>
            => |c| jobs::lead_jobs(c, project, lead);
        read fn lead_troubles(project: ProjectId, leads: &[LeadId])
            -> StoreResult<Vec<Trouble>>
            => |c| jobs::lead_troubles(c, project, leads);
        read fn troubles(project: ProjectId)
            -> StoreResult<Vec<Trouble>>
            => |c| jobs::troubles(c, project);
        read fn troubled_leads(project: ProjectId)
            -> StoreResult<u64>
            => |c| jobs::troubled_leads(c, project);
        read fn lead_activity(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<LeadEvent>>
            => |c| activity::lead_activity(c, project, lead);
        read fn last_ratings(project: ProjectId, leads: &[LeadId])
            -> StoreResult<Vec<(LeadId, LeadEvent)>>
            => |c| activity::last_ratings(c, project, leads);
        read fn person_leads(project: ProjectId, who: &LeadIdentifier)
            -> StoreResult<Vec<LeadId>>
            => |c| erasure::person_leads(c, project, who);
        transaction fn delete_lead(
            project: ProjectId,
            lead: LeadId,
            by: &Attribution,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| activity::delete_lead(&tx, project, lead, by, now) .await?;
        transaction fn record_project_event(
            project: ProjectId,
            by: &Attribution,
            event: &ProjectActivity,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| activity::record_project_event(&tx, project, by, event, now) .await?;
        read fn project_history(
            project: ProjectId,
            before: Option<i64>,
            limit: u32,
            now: DateTime<Utc>,
        )
            -> StoreResult<Vec<ProjectEvent>>
            => |c| activity::project_history(c, project, before, limit, now);
        transaction fn assign(
            project: ProjectId,
            leads: &[LeadId],
            to: Option<UserId>,
            by: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<Vec<LeadId>>
            => |tx| assignment::assign(&tx, (project, leads), to, by, now) .await?;
        transaction fn add_comment(
            project: ProjectId,
            lead: LeadId,
            author: &Actor,
            text: &str,
            now: DateTime<Utc>,
        )
            -> StoreResult<Comment>
            => |tx| comments::add(&tx, (project, lead), author, text, now) .await?;
        read fn comments(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<Comment>>
            => |c| comments::list(c, project, lead);
        transaction fn edit_comment(
            project: ProjectId,
            comment: (LeadId, i64),
            author: &Actor,
            text: &str,
            now: DateTime<Utc>,
        )
            -> StoreResult<Comment>
            => |tx| comments::edit(&tx, project, comment, author, text, now) .await?;
        transaction fn delete_comment(
            project: ProjectId,
            comment: (LeadId, i64),
            author: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| comments::delete(&tx, project, comment, author, now) .await?;
        transaction fn set_next_step(
            project: ProjectId,
            lead: LeadId,
            step: Option<&NextStep>,
            by: &Actor,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| next_steps::set(&tx, (project, lead), step, by, now).await?;
        read fn next_steps(project: ProjectId, leads: &[LeadId])
            -> StoreResult<Vec<(LeadId, NextStep)>>
            => |c| next_steps::of_leads(c, project, leads);
        read fn due_steps(project: ProjectId, by: DateTime<Utc>, assignee: Option<UserId>)
            -> StoreResult<Vec<DueStep>>
            => |c| next_steps::due(c, project, by, assignee);
        read fn next_step_coverage(project: ProjectId)
            -> StoreResult<Coverage>
            => |c| next_steps::coverage(c, project);
        transaction fn save_draft(project: ProjectId, draft: &Draft)
            -> StoreResult<()>
            => |tx| drafts::save(&tx, project, draft).await?;
        transaction fn discard_draft(project: ProjectId, lead: LeadId)
            -> StoreResult<bool>
            => |tx| drafts::discard(&tx, project, lead).await?;
        read fn drafts(project: ProjectId)
            -> StoreResult<Vec<Draft>>
            => |c| drafts::list(c, project);
    }
    verbatim {
        async fn create_screened_lead(
            &self,
            project: ProjectId,
            route: CreateRoute,
            data: LeadData,
            spam: Option<SpamReason>,
            now: DateTime<Utc>,
        ) -> StoreResult<CreatedLead> {
            // The row is made before a connection is taken.
            let row = LeadRow::of(data).map_err(StoreError::backend)?;
            let arrival = (route, spam);
            let (created, queued) = self.creates.create(project, arrival, row, now).await?;
            self.counter.wake();
            if queued {
                self.listener.queued();
            }
            Ok(created)
        }

        async fn import_leads(
            &self,
            project: ProjectId,
            leads: &[ImportedLead],
        ) -> StoreResult<ImportCounts> {
            let rows = LeadRow::of_imported(leads).map_err(StoreError::backend)?;
            let counts = transaction!(self, |tx| leads::import(&tx, project, &rows).await?)?;
            self.counter.wake();
            let written = counts.imported;
            read!(self, |c| leads::analyze_if_unknown(c, written))?;
            Ok(counts)
        }

        async fn mark_spam(
            &self,
            project: ProjectId,
            leads: &[LeadId],
            by: &Actor,
            now: DateTime<Utc>,
        ) -> StoreResult<Vec<LeadId>> {
            Ok(transaction!(self, |tx| leads::mark_spam(
                &tx, project, leads, by, now
            )
            .await?)?)
        }

        async fn list_leads(&self, project: ProjectId, query: &LeadQuery) -> StoreResult<LeadPage> {
            if !listing::counts_matches(query) {
                return read!(self, |c| listing::list(c, project, query));
            }
            // A count of the matches and the page at once, on two connections: each reads the
            // matches (a search's, say). A page past the total is empty anyway.
            let (total, leads) = tokio::join!(
                async { read!(self, |c| listing::total(c, project, query)) },
                async { read!(self, |c| listing::page(c, project, query)) }
            );
            let total = total?;
            Ok(LeadPage {
                leads: leads?,
                total,
                total_is_lower_bound: !query.counted_all(total),
            })
        }

        async fn update_status_from(
            &self,
            project: ProjectId,
            update: &StatusUpdate,
            by: &Actor,
            now: DateTime<Utc>,
            form: Option<FormRating>,
        ) -> StoreResult<StatusChange> {
            let change = transaction!(self, |tx| jobs::update_status(
                &tx,
                project,
                (update, form),
                by,
                now
            )
            .await?)?;
            if change.job.is_some() {
                self.listener.queued();
            }
            Ok(change)
        }

        async fn erase_person(
            &self,
            project: ProjectId,
            who: &LeadIdentifier,
            by: &Attribution,
            now: DateTime<Utc>,
        ) -> StoreResult<Erased> {
            let (erased, queued) = transaction!(self, |tx| erasure::erase_person(
                &tx, project, who, by, now
            )
            .await?)?;
            if queued {
                self.listener.queued();
            }
            Ok(erased)
        }

        async fn erase_expired(
            &self,
            project: ProjectId,
            now: DateTime<Utc>,
            limit: u32,
        ) -> StoreResult<u64> {
            let (taken, queued) = transaction!(self, |tx| erasure::erase_expired(
                &tx, project, now, limit
            )
            .await?)?;
            if queued {
                self.listener.queued();
            }
            Ok(taken)
        }

        async fn correct_contact(
            &self,
            project: ProjectId,
            lead: LeadId,
            correction: &ContactCorrection,
            by: &Actor,
            now: DateTime<Utc>,
        ) -> StoreResult<bool> {
            let which = (project, lead);
            let corrected = transaction!(self, |tx| leads::correct_contact(
                &tx, which, correction, by, now
            )
            .await?)?;
            if corrected == Some(true) {
                self.listener.queued();
            }
            Ok(corrected.is_some())
        }

        async fn retry_failed(
            &self,
            project: ProjectId,
            target: RetryTarget,
            by: &Actor,
            now: DateTime<Utc>,
        ) -> StoreResult<Vec<JobId>> {
            let queued = transaction!(self, |tx| jobs::retry_failed(&tx, project, target, by, now)
                .await?)?;
            if !queued.is_empty() {
                self.listener.queued();
            }
            Ok(queued)
        }
    }
}

on_pool! {
    impl Admin {
        transaction fn create_project(project: NewProject, now: DateTime<Utc>)
            -> StoreResult<Project>
            => |tx| admin::create_project(&tx, &project, now).await?;
        read fn projects() -> StoreResult<Vec<Project>> => |c| admin::projects(c);
        transaction fn update_project(project: ProjectId, settings: ProjectSettings)
            -> StoreResult<Project>
            => |tx| admin::update_project(&tx, project, &settings) .await?;
        transaction fn set_project_active(project: ProjectId, active: bool)
            -> StoreResult<Project>
            => |tx| admin::set_project_active(&tx, project, active) .await?;
        transaction fn insert_api_key(project: ProjectId, key: &GeneratedKey, now: DateTime<Utc>)
            -> StoreResult<ApiKeyInfo>
            => |tx| admin::insert_api_key(&tx, project, key, now) .await?;
        read fn api_keys(project: ProjectId)
            -> StoreResult<Vec<ApiKeyInfo>>
            => |c| admin::api_keys(c, project);
        transaction fn revoke_api_key(project: ProjectId, key: &KeyRef, now: DateTime<Utc>)
            -> StoreResult<ApiKeyInfo>
            => |tx| admin::revoke_api_key(&tx, project, key, now) .await?;
        transaction fn create_label(project: ProjectId, label: NewLabel, now: DateTime<Utc>)
            -> StoreResult<ConversionLabel>
            => |tx| admin::create_label(&tx, project, &label, now) .await?;
        read fn labels(project: ProjectId)
            -> StoreResult<Vec<ConversionLabel>>
            => |c| admin::labels(c, project);
        read fn label(project: ProjectId, id: Uuid)
            -> StoreResult<ConversionLabel>
            => |c| admin::label(c, project, id);
        transaction fn update_label(project: ProjectId, id: Uuid, label: NewLabel)
            -> StoreResult<ConversionLabel>
            => |tx| admin::update_label(&tx, project, id, &label) .await?;
        transaction fn set_label_archived(project: ProjectId, id: Uuid, archived: bool)
            -> StoreResult<ConversionLabel>
            => |tx| admin::set_label_archived(&tx, project, id, archived) .await?;
        transaction fn delete_label(project: ProjectId, id: Uuid)
            -> StoreResult<()>
            => |tx| admin::delete_label(&tx, project, id).await?;
        transaction fn reorder_labels(project: ProjectId, order: &[Uuid])
            -> StoreResult<Vec<ConversionLabel>>
            => |tx| admin::reorder_labels(&tx, project, order) .await?;
        read with vault fn chat_channels(project: ProjectId)
            -> StoreResult<Vec<ChatChannel>>
            => |c| alerts::channels(c, vault, project);
        read with vault fn oauth_grant(project: ProjectId, provider: Provider)
            -> StoreResult<Option<OAuthGrant>>
            => |c| admin::oauth_grant(c, vault, project, provider);
        read with vault fn lead_source(project: ProjectId, kind: SourceKind)
            -> StoreResult<Option<LeadSource>>
            => |c| admin::lead_source(c, vault, project, kind);
        read with vault fn lead_sources_routed(kind: SourceKind, routing: &str)
            -> StoreResult<Vec<(ProjectId, LeadSource)>>
            => |c| admin::lead_sources_routed(c, vault, kind, routing);
        transaction with vault fn set_lead_source(
            project: ProjectId,
            kind: SourceKind,
            source: Option<&LeadSource>,
        )
            -> StoreResult<()>
            => |tx| admin::set_lead_source(&tx, vault, project, kind, source) .await?;
        transaction with vault fn save_inbound_hook(hook: &InboundHook)
            -> StoreResult<()>
            => |tx| admin::save_inbound_hook(&tx, vault, hook) .await?;
        read with vault fn inbound_hooks(project: ProjectId)
            -> StoreResult<Vec<InboundHook>>
            => |c| admin::inbound_hooks(c, vault, (Some(project), None));
        transaction fn remove_inbound_hook(project: ProjectId, id: &str)
            -> StoreResult<bool>
            => |tx| admin::remove_inbound_hook(&tx, project, id) .await?;
        transaction with vault fn set_oauth_grant(
            project: ProjectId,
            provider: Provider,
            grant: Option<&OAuthGrant>,
        )
            -> StoreResult<()>
            => |tx| admin::set_oauth_grant(&tx, vault, project, provider, grant) .await?;
        transaction with vault fn set_chat_channel(
            project: ProjectId,
            kind: ChatKind,
            url: Option<&str>,
        )
            -> StoreResult<()>
            => |tx| alerts::set_channel(&tx, vault, project, kind, url) .await?;
        read fn round_robin(project: ProjectId)
            -> StoreResult<Option<RoundRobin>>
            => |c| assignment::rule(c, project);
        transaction fn set_round_robin(project: ProjectId, rule: Option<&RoundRobin>)
            -> StoreResult<()>
            => |tx| assignment::set_rule(&tx, project, rule).await?;
        read with vault fn integrations(project: ProjectId)
            -> StoreResult<Integrations>
            => |c| admin::integrations(c, vault, project);
        transaction with vault fn set_integration(
            project: ProjectId,
            settings: IntegrationSettings,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| admin::set_integration(&tx, vault, project, &settings, now) .await?;
        transaction fn remove_integration(project: ProjectId, kind: IntegrationKind)
            -> StoreResult<bool>
            => |tx| admin::remove_integration(&tx, project, kind) .await?;
        read fn last_attempts(project: ProjectId)
            -> StoreResult<Vec<Attempt>>
            => |c| admin::last_attempts(c, project);
    }
    verbatim {
        async fn project(&self, public_id: &str) -> StoreResult<Project> {
            self.project_by_public_id(public_id).await
        }

        async fn inbound_hook(&self, id: &str) -> StoreResult<(InboundHook, Project)> {
            let found = read!(self, |c| admin::inbound_hooks(
                c,
                &self.vault,
                (None, Some(id))
            ))?;
            let hook = found
                .into_iter()
                .next()
                .ok_or(StoreError::NotFound(Entity::Webhook))?;
            let project = read!(self, |c| admin::project(c, hook.project))?;
            Ok((hook, project))
        }
    }
}

on_pool! {
    impl JobQueue {
        transaction with vault fn claim_job(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Option<ClaimedJob>>
            => |tx| jobs::claim(&tx, vault, now, lease_for) .await?;
        read fn queue_depth(now: DateTime<Utc>)
            -> StoreResult<QueueDepths>
            => |c| jobs::queue_depth(c, now);
        transaction fn record_attempt(job: JobId, lease: Uuid, attempt: &Attempt)
            -> StoreResult<()>
            => |tx| jobs::record_attempt(&tx, job, lease, attempt) .await?;
        transaction fn reschedule_job(job: JobId, lease: Uuid, due_at: DateTime<Utc>)
            -> StoreResult<()>
            => |tx| jobs::reschedule(&tx, job, lease, due_at).await?;
        transaction fn finish_job(job: JobId, lease: Uuid, now: DateTime<Utc>)
            -> StoreResult<LeadStatus>
            => |tx| jobs::finish(&tx, job, lease, now).await?;
        transaction fn take_alerts(limit: u32)
            -> StoreResult<Vec<QueuedAlert>>
            => |tx| alerts::take(&tx, limit).await?;
        transaction fn take_reminders(now: DateTime<Utc>, limit: u32)
            -> StoreResult<Vec<Reminder>>
            => |tx| next_steps::take(&tx, now, limit).await?;
        transaction with vault fn rotate_refresh_token(
            project: ProjectId,
            kind: IntegrationKind,
            old: &Secret,
            new: Secret,
            now: DateTime<Utc>,
        )
            -> StoreResult<bool>
            => |tx| admin::rotate_refresh_token(&tx, vault, project, kind, old, &new, now) .await?;
        transaction fn queue_lead_fetch(
            project: ProjectId,
            fetch: &NewLeadFetch,
            now: DateTime<Utc>,
        )
            -> StoreResult<bool>
            => |tx| fetches::queue(&tx, project, fetch, now).await?;
        transaction fn claim_lead_fetch(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Option<ClaimedLeadFetch>>
            => |tx| fetches::claim(&tx, now, lease_for).await?;
        transaction fn finish_lead_fetch(
            id: i64,
            lease: Uuid,
            outcome: &FetchOutcome,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| fetches::finish(&tx, id, lease, outcome, now) .await?;
        transaction with vault fn claim_webhook_event(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Option<ClaimedWebhookEvent>>
            => |tx| webhooks::claim(&tx, vault, now, lease_for) .await?;
        transaction with vault fn claim_sync_events(now: DateTime<Utc>, lease_for: Duration)
            -> StoreResult<Vec<ClaimedWebhookEvent>>
            => |tx| webhooks::claim_sync(&tx, vault, now, lease_for) .await?;
        transaction fn record_webhook_attempt(id: i64, lease: Uuid, attempt: &WebhookAttempt)
            -> StoreResult<()>
            => |tx| webhooks::record_attempt(&tx, id, lease, attempt) .await?;
    }
    verbatim {
        async fn wait_for_work(&self, at_most: std::time::Duration) -> bool {
            self.listener.wait(at_most).await;
            true
        }
    }
}

on_pool! {
    impl Accounts {
        transaction fn create_user(user: NewUser, now: DateTime<Utc>)
            -> StoreResult<User>
            => |tx| accounts::create_user(&tx, &user, now).await?;
        read fn users() -> StoreResult<Vec<User>> => |c| accounts::users(c);
        read fn user_by_email(email: &str)
            -> StoreResult<User>
            => |c| accounts::user_by_email(c, email);
        read fn password_hash(user: UserId)
            -> StoreResult<PasswordHash>
            => |c| accounts::password_hash(c, user);
        transaction fn set_password(user: UserId, hash: &PasswordHash)
            -> StoreResult<()>
            => |tx| accounts::set_password(&tx, user, hash).await?;
        transaction fn set_user_disabled(user: UserId, disabled: bool)
            -> StoreResult<User>
            => |tx| accounts::set_user_disabled(&tx, user, disabled) .await?;
        transaction fn set_preferences(user: UserId, preferences: &Preferences)
            -> StoreResult<()>
            => |tx| accounts::set_preferences(&tx, user, preferences) .await?;
        transaction fn set_name(user: UserId, name: &str)
            -> StoreResult<User>
            => |tx| accounts::set_name(&tx, user, name).await?;
        transaction fn issue_link(
            user: UserId,
            link: &AccountLink,
            hash: &LinkHash,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| links::issue(&tx, user, (link, hash), now, None).await.map(|_| ())?;
        transaction fn issue_link_unless_recent(
            user: UserId,
            link: &AccountLink,
            hash: &LinkHash,
            now: DateTime<Utc>,
            since: DateTime<Utc>,
        )
            -> StoreResult<bool>
            => |tx| links::issue(&tx, user, (link, hash), now, Some(since)).await?;
        transaction fn reset_password(hash: &LinkHash, password: &PasswordHash, now: DateTime<Utc>)
            -> StoreResult<User>
            => |tx| links::reset_password(&tx, hash, password, now) .await?;
        transaction fn confirm_email(hash: &LinkHash, now: DateTime<Utc>)
            -> StoreResult<User>
            => |tx| links::confirm_email(&tx, hash, now).await?;
        transaction fn invite(
            project: ProjectId,
            invitation: &NewInvitation,
            hash: &LinkHash,
            now: DateTime<Utc>,
        )
            -> StoreResult<Invitation>
            => |tx| links::invite(&tx, project, invitation, hash, now) .await?;
        read fn invitations(project: ProjectId)
            -> StoreResult<Vec<Invitation>>
            => |c| links::invitations(c, project);
        transaction fn renew_invitation(
            project: ProjectId,
            id: i64,
            hash: &LinkHash,
            now: DateTime<Utc>,
        )
            -> StoreResult<Invitation>
            => |tx| links::renew(&tx, project, id, hash, now).await?;
        transaction fn revoke_invitation(project: ProjectId, id: i64)
            -> StoreResult<Invitation>
            => |tx| links::revoke(&tx, project, id).await?;
        read fn invitation(hash: &LinkHash, now: DateTime<Utc>)
            -> StoreResult<(Invitation, Project)>
            => |c| links::find(c, hash, now);
        transaction fn accept_invitation(hash: &LinkHash, account: Acceptance, now: DateTime<Utc>)
            -> StoreResult<(User, Project)>
            => |tx| links::accept(&tx, hash, &account, now).await?;
        transaction fn set_alerts(project: ProjectId, user: UserId, alerts: &AlertPreferences)
            -> StoreResult<()>
            => |tx| accounts::set_alerts(&tx, project, user, alerts) .await?;
        transaction fn set_export(project: ProjectId, user: UserId, allowed: bool)
            -> StoreResult<()>
            => |tx| accounts::set_export(&tx, project, user, allowed) .await?;
        transaction fn save_view(
            project: ProjectId,
            owner: UserId,
            view: &NewSavedView,
            now: DateTime<Utc>,
        )
            -> StoreResult<SavedView>
            => |tx| views::save(&tx, project, owner, view, now) .await?;
        read fn saved_views(project: ProjectId, user: UserId)
            -> StoreResult<Vec<SavedView>>
            => |c| views::list(c, project, user);
        transaction fn delete_view(project: ProjectId, id: i64)
            -> StoreResult<bool>
            => |tx| views::delete(&tx, project, id).await?;
        transaction fn add_member(project: ProjectId, user: UserId, role: Role, now: DateTime<Utc>)
            -> StoreResult<()>
            => |tx| accounts::add_member(&tx, project, user, role, now) .await?;
        transaction fn remove_member(project: ProjectId, user: UserId)
            -> StoreResult<bool>
            => |tx| accounts::remove_member(&tx, project, user) .await?;
        read fn members(project: ProjectId)
            -> StoreResult<Vec<Member>>
            => |c| accounts::members(c, project);
        read fn memberships(user: UserId)
            -> StoreResult<Vec<Membership>>
            => |c| accounts::memberships(c, user);
        read fn membership(user: UserId, public_id: &str)
            -> StoreResult<Membership>
            => |c| accounts::membership_of(c, user, public_id);
        transaction fn create_session(
            user: UserId,
            hash: &SessionHash,
            device: &Device,
            now: DateTime<Utc>,
        )
            -> StoreResult<Session>
            => |tx| accounts::create_session(&tx, user, hash, device, now) .await?;
        read fn sessions(user: UserId, now: DateTime<Utc>)
            -> StoreResult<Vec<SessionInfo>>
            => |c| accounts::sessions(c, user, now);
        transaction fn end_other_sessions(user: UserId, keep: &SessionHash)
            -> StoreResult<u64>
            => |tx| accounts::end_other_sessions(&tx, user, keep) .await?;
        read fn session(hash: &SessionHash, now: DateTime<Utc>)
            -> StoreResult<(User, Session)>
            => |c| accounts::session(c, hash, now);
        transaction fn touch_session(hash: &SessionHash, now: DateTime<Utc>)
            -> StoreResult<()>
            => |tx| accounts::touch_session(&tx, hash, now).await?;
        transaction fn end_sessions(user: UserId)
            -> StoreResult<()>
            => |tx| accounts::end_sessions_of(&tx, user).await?;
        transaction fn record_throttled(
            what: Throttled,
            email: &str,
            address: &str,
            now: DateTime<Utc>,
        )
            -> StoreResult<()>
            => |tx| accounts::record_throttled(&tx, what, email, address, now).await?;
        read fn throttled_attempts(what: Throttled, email: &str, address: &str, since: DateTime<Utc>)
            -> StoreResult<Attempts>
            => |c| accounts::throttled_attempts(c, what, email, address, since);
    }
}

on_pool! {
    impl LeadWebhooks {
        transaction with vault fn create_webhook(
            project: ProjectId,
            webhook: NewWebhook,
            now: DateTime<Utc>,
        )
            -> StoreResult<Webhook>
            => |tx| webhooks::create(&tx, vault, project, &webhook, now) .await?;
        read with vault fn webhooks(project: ProjectId)
            -> StoreResult<Vec<WebhookStatus>>
            => |c| webhooks::list(c, vault, project);
        transaction fn remove_webhook(project: ProjectId, id: Uuid)
            -> StoreResult<bool>
            => |tx| webhooks::remove(&tx, project, id).await?;
        transaction with vault fn update_webhook(project: ProjectId, id: Uuid, webhook: NewWebhook)
            -> StoreResult<Webhook>
            => |tx| webhooks::update(&tx, vault, (project, id), &webhook).await?;
        read fn lead_syncs(project: ProjectId, lead: LeadId)
            -> StoreResult<Vec<LeadSync>>
            => |c| webhooks::lead_syncs(c, project, lead);
        read fn crm_record(webhook: Uuid, lead: LeadId)
            -> StoreResult<CrmRecord>
            => |c| webhooks::crm_record(c, webhook, lead);
        transaction fn save_crm_record(webhook: Uuid, lead: LeadId, record: &CrmRecord)
            -> StoreResult<()>
            => |tx| webhooks::save_crm_record(&tx, webhook, lead, record).await?;
    }
}

on_pool! {
    impl Spending {
        transaction fn save_spend(project: ProjectId, rows: &[SpendRow])
            -> StoreResult<u64>
            => |tx| spend::save(&tx, project, rows).await?;
        read fn spend(project: ProjectId, from: NaiveDate, to: NaiveDate)
            -> StoreResult<Vec<SpendRow>>
            => |c| spend::list(c, project, (from, to));
        transaction fn replace_spend(
            project: ProjectId,
            source: &str,
            account: &str,
            days: (NaiveDate, NaiveDate),
            rows: &[SpendRow],
        )
            -> StoreResult<u64>
            => |tx| spend::replace(&tx, project, (source, account), days, rows).await?;
        read with vault fn spend_sources(project: ProjectId)
            -> StoreResult<Vec<SpendSource>>
            => |c| spend::sources(c, vault, project);
        transaction with vault fn set_spend_source(project: ProjectId, source: &SpendSource)
            -> StoreResult<()>
            => |tx| spend::set_source(&tx, vault, project, source).await?;
        transaction fn remove_spend_source(project: ProjectId, platform: SpendPlatform)
            -> StoreResult<()>
            => |tx| spend::remove_source(&tx, project, platform).await?;
        transaction fn record_spend_sync(
            project: ProjectId,
            platform: SpendPlatform,
            at: DateTime<Utc>,
            error: Option<&str>,
        )
            -> StoreResult<()>
            => |tx| spend::record_sync(&tx, project, platform, (at, error)).await?;
        read fn fx_rates(project: ProjectId)
            -> StoreResult<FxRates>
            => |c| spend::rates(c, project);
        transaction fn set_fx_rates(project: ProjectId, rates: &FxRates)
            -> StoreResult<()>
            => |tx| spend::set_rates(&tx, project, rates).await?;
        read fn roas(project: ProjectId, query: &RoasQuery)
            -> StoreResult<RoasReport>
            => |c| spend::roas(c, project, query);
    }
}
