//! The store traits on [`PgStore`]: a write runs in a transaction ([`transaction!`], retried
//! on a serialisation failure or deadlock), a read on a pooled connection ([`read!`]).

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use leadtrack_core::account::{
    Actor, Device, LoginFailures, Member, Membership, NewUser, PasswordHash, Preferences, Session,
    SessionHash, SessionInfo, User,
};
use leadtrack_core::activity::{Attribution, LeadEvent, ProjectActivity, ProjectEvent};
use leadtrack_core::alert::{AlertPreferences, ChatChannel, ChatKind, QueuedAlert};
use leadtrack_core::assignment::RoundRobin;
use leadtrack_core::comment::Comment;
use leadtrack_core::draft::Draft;
use leadtrack_core::import::{ImportCounts, ImportedLead};
use leadtrack_core::inbound::InboundHook;
use leadtrack_core::integration::{IntegrationSettings, Integrations, Secret};
use leadtrack_core::job::{
    Attempt, ClaimedJob, FormRating, JobRecord, QueueDepths, RetryTarget, StatusChange, UndoTarget,
};
use leadtrack_core::key::{ApiKeyInfo, GeneratedKey, KeyHash, KeyRef};
use leadtrack_core::label::{ConversionLabel, NewLabel};
use leadtrack_core::lead::{CreatedLead, LeadData, LeadPage, StoredLead};
use leadtrack_core::link::{Acceptance, AccountLink, Invitation, LinkHash, NewInvitation};
use leadtrack_core::oauth::{OAuthGrant, Provider};
use leadtrack_core::project::{NewProject, Project, ProjectSettings};
use leadtrack_core::report::{Report, ReportQuery};
use leadtrack_core::request::{CreateRoute, Cursor, LeadQuery, StatusUpdate};
use leadtrack_core::saved_view::{NewSavedView, SavedView};
use leadtrack_core::source::{
    ClaimedLeadFetch, FetchOutcome, LeadSource, NewLeadFetch, SourceKind,
};
use leadtrack_core::spam::SpamReason;
use leadtrack_core::store::{Entity, LeadRow, Listed};
use leadtrack_core::types::{
    IntegrationKind, JobId, LeadId, LeadIdentifier, LeadStatus, ProjectId, Role, UserId,
};
use leadtrack_core::webhook::{
    ClaimedWebhookEvent, NewWebhook, Webhook, WebhookAttempt, WebhookStatus,
};
use leadtrack_core::{Accounts, Admin, JobQueue, LeadStore, StoreError, StoreResult};
use uuid::Uuid;

use crate::{
    PgStore, accounts, activity, admin, alerts, assignment, comments, drafts, fetches, jobs, leads,
    links, listing, lookup, report, schema, transaction, views, webhooks,
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

#[async_trait]
impl LeadStore for PgStore {
    async fn ready(&self) -> StoreResult<()> {
        read!(self, |c| schema::check_current(c))
    }

    async fn authenticate(&self, key: &KeyHash) -> StoreResult<Project> {
        read!(self, |c| admin::authenticate(c, key))
    }

    async fn project_by_public_id(&self, public_id: &str) -> StoreResult<Project> {
        read!(self, |c| admin::project_by_public_id(c, public_id))
    }

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
        let (created, queued) =
            transaction!(self, |tx| leads::create(&tx, project, arrival, &row, now)
                .await?)?;
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

    async fn find_lead(
        &self,
        project: ProjectId,
        identifier: &LeadIdentifier,
    ) -> StoreResult<StoredLead> {
        read!(self, |c| lookup::find(c, project, identifier))
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

    async fn listed_values(&self, project: ProjectId, listed: Listed) -> StoreResult<Vec<String>> {
        read!(self, |c| listing::listed_values(c, project, listed))
    }

    async fn status_counts(
        &self,
        project: ProjectId,
        query: &LeadQuery,
    ) -> StoreResult<Vec<(LeadStatus, u64)>> {
        read!(self, |c| listing::status_counts(c, project, query))
    }

    async fn export_leads(
        &self,
        project: ProjectId,
        query: &LeadQuery,
        after: Option<&Cursor>,
        limit: u32,
    ) -> StoreResult<Vec<StoredLead>> {
        read!(self, |c| listing::export(c, project, query, after, limit))
    }

    async fn report(&self, project: ProjectId, query: &ReportQuery) -> StoreResult<Report> {
        read!(self, |c| report::report(c, project, query))
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

    async fn undo(
        &self,
        project: ProjectId,
        target: UndoTarget,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>> {
        transaction!(self, |tx| jobs::undo(&tx, project, target, by, now).await?)
    }

    async fn lead_jobs(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<JobRecord>> {
        read!(self, |c| jobs::lead_jobs(c, project, lead))
    }

    async fn lead_activity(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<LeadEvent>> {
        read!(self, |c| activity::lead_activity(c, project, lead))
    }

    async fn last_ratings(
        &self,
        project: ProjectId,
        leads: &[LeadId],
    ) -> StoreResult<Vec<(LeadId, LeadEvent)>> {
        read!(self, |c| activity::last_ratings(c, project, leads))
    }

    async fn delete_lead(
        &self,
        project: ProjectId,
        lead: LeadId,
        by: &Attribution,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| activity::delete_lead(
            &tx, project, lead, by, now
        )
        .await?)
    }

    async fn record_project_event(
        &self,
        project: ProjectId,
        by: &Attribution,
        event: &ProjectActivity,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| activity::record_project_event(
            &tx, project, by, event, now
        )
        .await?)
    }

    async fn project_history(
        &self,
        project: ProjectId,
        before: Option<i64>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<ProjectEvent>> {
        read!(self, |c| activity::project_history(
            c, project, before, limit, now
        ))
    }

    async fn assign(
        &self,
        project: ProjectId,
        leads: &[LeadId],
        to: Option<UserId>,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>> {
        transaction!(self, |tx| assignment::assign(
            &tx,
            (project, leads),
            to,
            by,
            now
        )
        .await?)
    }

    async fn add_comment(
        &self,
        project: ProjectId,
        lead: LeadId,
        author: &Actor,
        text: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment> {
        transaction!(self, |tx| comments::add(
            &tx,
            (project, lead),
            author,
            text,
            now
        )
        .await?)
    }

    async fn comments(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<Comment>> {
        read!(self, |c| comments::list(c, project, lead))
    }

    async fn edit_comment(
        &self,
        project: ProjectId,
        comment: (LeadId, i64),
        author: &Actor,
        text: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment> {
        transaction!(self, |tx| comments::edit(
            &tx, project, comment, author, text, now
        )
        .await?)
    }

    async fn delete_comment(
        &self,
        project: ProjectId,
        comment: (LeadId, i64),
        author: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| comments::delete(
            &tx, project, comment, author, now
        )
        .await?)
    }

    async fn save_draft(&self, project: ProjectId, draft: &Draft) -> StoreResult<()> {
        transaction!(self, |tx| drafts::save(&tx, project, draft).await?)
    }

    async fn discard_draft(&self, project: ProjectId, lead: LeadId) -> StoreResult<bool> {
        transaction!(self, |tx| drafts::discard(&tx, project, lead).await?)
    }

    async fn drafts(&self, project: ProjectId) -> StoreResult<Vec<Draft>> {
        read!(self, |c| drafts::list(c, project))
    }
}

#[async_trait]
impl Admin for PgStore {
    async fn create_project(
        &self,
        project: NewProject,
        now: DateTime<Utc>,
    ) -> StoreResult<Project> {
        transaction!(self, |tx| admin::create_project(&tx, &project, now).await?)
    }

    async fn projects(&self) -> StoreResult<Vec<Project>> {
        read!(self, |c| admin::projects(c))
    }

    async fn project(&self, public_id: &str) -> StoreResult<Project> {
        self.project_by_public_id(public_id).await
    }

    async fn update_project(
        &self,
        project: ProjectId,
        settings: ProjectSettings,
    ) -> StoreResult<Project> {
        transaction!(self, |tx| admin::update_project(&tx, project, &settings)
            .await?)
    }

    async fn set_project_active(&self, project: ProjectId, active: bool) -> StoreResult<Project> {
        transaction!(self, |tx| admin::set_project_active(&tx, project, active)
            .await?)
    }

    async fn insert_api_key(
        &self,
        project: ProjectId,
        key: &GeneratedKey,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo> {
        transaction!(self, |tx| admin::insert_api_key(&tx, project, key, now)
            .await?)
    }

    async fn api_keys(&self, project: ProjectId) -> StoreResult<Vec<ApiKeyInfo>> {
        read!(self, |c| admin::api_keys(c, project))
    }

    async fn revoke_api_key(
        &self,
        project: ProjectId,
        key: &KeyRef,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo> {
        transaction!(self, |tx| admin::revoke_api_key(&tx, project, key, now)
            .await?)
    }

    async fn create_label(
        &self,
        project: ProjectId,
        label: NewLabel,
        now: DateTime<Utc>,
    ) -> StoreResult<ConversionLabel> {
        transaction!(self, |tx| admin::create_label(&tx, project, &label, now)
            .await?)
    }

    async fn labels(&self, project: ProjectId) -> StoreResult<Vec<ConversionLabel>> {
        read!(self, |c| admin::labels(c, project))
    }

    async fn label(&self, project: ProjectId, id: Uuid) -> StoreResult<ConversionLabel> {
        read!(self, |c| admin::label(c, project, id))
    }

    async fn update_label(
        &self,
        project: ProjectId,
        id: Uuid,
        label: NewLabel,
    ) -> StoreResult<ConversionLabel> {
        transaction!(self, |tx| admin::update_label(&tx, project, id, &label)
            .await?)
    }

    async fn set_label_archived(
        &self,
        project: ProjectId,
        id: Uuid,
        archived: bool,
    ) -> StoreResult<ConversionLabel> {
        transaction!(self, |tx| admin::set_label_archived(
            &tx, project, id, archived
        )
        .await?)
    }

    async fn delete_label(&self, project: ProjectId, id: Uuid) -> StoreResult<()> {
        transaction!(self, |tx| admin::delete_label(&tx, project, id).await?)
    }

    async fn reorder_labels(
        &self,
        project: ProjectId,
        order: &[Uuid],
    ) -> StoreResult<Vec<ConversionLabel>> {
        transaction!(self, |tx| admin::reorder_labels(&tx, project, order)
            .await?)
    }

    async fn chat_channels(&self, project: ProjectId) -> StoreResult<Vec<ChatChannel>> {
        read!(self, |c| alerts::channels(c, &self.vault, project))
    }

    async fn oauth_grant(
        &self,
        project: ProjectId,
        provider: Provider,
    ) -> StoreResult<Option<OAuthGrant>> {
        read!(self, |c| admin::oauth_grant(
            c,
            &self.vault,
            project,
            provider
        ))
    }

    async fn lead_source(
        &self,
        project: ProjectId,
        kind: SourceKind,
    ) -> StoreResult<Option<LeadSource>> {
        read!(self, |c| admin::lead_source(c, &self.vault, project, kind))
    }

    async fn lead_sources_routed(
        &self,
        kind: SourceKind,
        routing: &str,
    ) -> StoreResult<Vec<(ProjectId, LeadSource)>> {
        read!(self, |c| admin::lead_sources_routed(
            c,
            &self.vault,
            kind,
            routing
        ))
    }

    async fn set_lead_source(
        &self,
        project: ProjectId,
        kind: SourceKind,
        source: Option<&LeadSource>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| admin::set_lead_source(
            &tx,
            &self.vault,
            project,
            kind,
            source
        )
        .await?)
    }

    async fn save_inbound_hook(&self, hook: &InboundHook) -> StoreResult<()> {
        transaction!(self, |tx| admin::save_inbound_hook(&tx, &self.vault, hook)
            .await?)
    }

    async fn inbound_hooks(&self, project: ProjectId) -> StoreResult<Vec<InboundHook>> {
        read!(self, |c| admin::inbound_hooks(
            c,
            &self.vault,
            (Some(project), None)
        ))
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

    async fn remove_inbound_hook(&self, project: ProjectId, id: &str) -> StoreResult<bool> {
        transaction!(self, |tx| admin::remove_inbound_hook(&tx, project, id)
            .await?)
    }

    async fn set_oauth_grant(
        &self,
        project: ProjectId,
        provider: Provider,
        grant: Option<&OAuthGrant>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| admin::set_oauth_grant(
            &tx,
            &self.vault,
            project,
            provider,
            grant
        )
        .await?)
    }

    async fn set_chat_channel(
        &self,
        project: ProjectId,
        kind: ChatKind,
        url: Option<&str>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| alerts::set_channel(
            &tx,
            &self.vault,
            project,
            kind,
            url
        )
        .await?)
    }

    async fn round_robin(&self, project: ProjectId) -> StoreResult<Option<RoundRobin>> {
        read!(self, |c| assignment::rule(c, project))
    }

    async fn set_round_robin(
        &self,
        project: ProjectId,
        rule: Option<&RoundRobin>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| assignment::set_rule(&tx, project, rule).await?)
    }

    async fn integrations(&self, project: ProjectId) -> StoreResult<Integrations> {
        read!(self, |c| admin::integrations(c, &self.vault, project))
    }

    async fn set_integration(
        &self,
        project: ProjectId,
        settings: IntegrationSettings,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| admin::set_integration(
            &tx,
            &self.vault,
            project,
            &settings,
            now
        )
        .await?)
    }

    async fn remove_integration(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
    ) -> StoreResult<bool> {
        transaction!(self, |tx| admin::remove_integration(&tx, project, kind)
            .await?)
    }

    async fn last_attempts(&self, project: ProjectId) -> StoreResult<Vec<Attempt>> {
        read!(self, |c| admin::last_attempts(c, project))
    }

    async fn create_webhook(
        &self,
        project: ProjectId,
        webhook: NewWebhook,
        now: DateTime<Utc>,
    ) -> StoreResult<Webhook> {
        transaction!(self, |tx| webhooks::create(
            &tx,
            &self.vault,
            project,
            &webhook,
            now
        )
        .await?)
    }

    async fn webhooks(&self, project: ProjectId) -> StoreResult<Vec<WebhookStatus>> {
        read!(self, |c| webhooks::list(c, &self.vault, project))
    }

    async fn remove_webhook(&self, project: ProjectId, id: Uuid) -> StoreResult<bool> {
        transaction!(self, |tx| webhooks::remove(&tx, project, id).await?)
    }
}

#[async_trait]
impl JobQueue for PgStore {
    async fn claim_job(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedJob>> {
        transaction!(self, |tx| jobs::claim(&tx, &self.vault, now, lease_for)
            .await?)
    }

    async fn wait_for_work(&self, at_most: std::time::Duration) -> bool {
        self.listener.wait(at_most).await;
        true
    }

    async fn queue_depth(&self, now: DateTime<Utc>) -> StoreResult<QueueDepths> {
        read!(self, |c| jobs::queue_depth(c, now))
    }

    async fn record_attempt(&self, job: JobId, lease: Uuid, attempt: &Attempt) -> StoreResult<()> {
        transaction!(self, |tx| jobs::record_attempt(&tx, job, lease, attempt)
            .await?)
    }

    async fn reschedule_job(
        &self,
        job: JobId,
        lease: Uuid,
        due_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| jobs::reschedule(&tx, job, lease, due_at).await?)
    }

    async fn finish_job(
        &self,
        job: JobId,
        lease: Uuid,
        now: DateTime<Utc>,
    ) -> StoreResult<LeadStatus> {
        transaction!(self, |tx| jobs::finish(&tx, job, lease, now).await?)
    }

    async fn take_alerts(&self, limit: u32) -> StoreResult<Vec<QueuedAlert>> {
        transaction!(self, |tx| alerts::take(&tx, limit).await?)
    }

    async fn rotate_refresh_token(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
        old: &Secret,
        new: Secret,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        transaction!(self, |tx| admin::rotate_refresh_token(
            &tx,
            &self.vault,
            project,
            kind,
            old,
            &new,
            now
        )
        .await?)
    }

    async fn queue_lead_fetch(
        &self,
        project: ProjectId,
        fetch: &NewLeadFetch,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        transaction!(self, |tx| fetches::queue(&tx, project, fetch, now).await?)
    }

    async fn claim_lead_fetch(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedLeadFetch>> {
        transaction!(self, |tx| fetches::claim(&tx, now, lease_for).await?)
    }

    async fn finish_lead_fetch(
        &self,
        id: i64,
        lease: Uuid,
        outcome: &FetchOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| fetches::finish(&tx, id, lease, outcome, now)
            .await?)
    }

    async fn claim_webhook_event(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedWebhookEvent>> {
        transaction!(self, |tx| webhooks::claim(&tx, &self.vault, now, lease_for)
            .await?)
    }

    async fn record_webhook_attempt(
        &self,
        id: i64,
        lease: Uuid,
        attempt: &WebhookAttempt,
    ) -> StoreResult<()> {
        transaction!(self, |tx| webhooks::record_attempt(&tx, id, lease, attempt)
            .await?)
    }
}

#[async_trait]
impl Accounts for PgStore {
    async fn create_user(&self, user: NewUser, now: DateTime<Utc>) -> StoreResult<User> {
        transaction!(self, |tx| accounts::create_user(&tx, &user, now).await?)
    }

    async fn users(&self) -> StoreResult<Vec<User>> {
        read!(self, |c| accounts::users(c))
    }

    async fn user_by_email(&self, email: &str) -> StoreResult<User> {
        read!(self, |c| accounts::user_by_email(c, email))
    }

    async fn password_hash(&self, user: UserId) -> StoreResult<PasswordHash> {
        read!(self, |c| accounts::password_hash(c, user))
    }

    async fn set_password(&self, user: UserId, hash: &PasswordHash) -> StoreResult<()> {
        transaction!(self, |tx| accounts::set_password(&tx, user, hash).await?)
    }

    async fn set_user_disabled(&self, user: UserId, disabled: bool) -> StoreResult<User> {
        transaction!(self, |tx| accounts::set_user_disabled(&tx, user, disabled)
            .await?)
    }

    async fn set_preferences(&self, user: UserId, preferences: &Preferences) -> StoreResult<()> {
        transaction!(self, |tx| accounts::set_preferences(&tx, user, preferences)
            .await?)
    }

    async fn set_name(&self, user: UserId, name: &str) -> StoreResult<User> {
        transaction!(self, |tx| accounts::set_name(&tx, user, name).await?)
    }

    async fn issue_link(
        &self,
        user: UserId,
        link: &AccountLink,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| links::issue(&tx, user, link, hash, now).await?)
    }

    async fn reset_password(
        &self,
        hash: &LinkHash,
        password: &PasswordHash,
        now: DateTime<Utc>,
    ) -> StoreResult<User> {
        transaction!(self, |tx| links::reset_password(&tx, hash, password, now)
            .await?)
    }

    async fn confirm_email(&self, hash: &LinkHash, now: DateTime<Utc>) -> StoreResult<User> {
        transaction!(self, |tx| links::confirm_email(&tx, hash, now).await?)
    }

    async fn invite(
        &self,
        project: ProjectId,
        invitation: &NewInvitation,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<Invitation> {
        transaction!(self, |tx| links::invite(
            &tx, project, invitation, hash, now
        )
        .await?)
    }

    async fn invitations(&self, project: ProjectId) -> StoreResult<Vec<Invitation>> {
        read!(self, |c| links::invitations(c, project))
    }

    async fn renew_invitation(
        &self,
        project: ProjectId,
        id: i64,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<Invitation> {
        transaction!(self, |tx| links::renew(&tx, project, id, hash, now).await?)
    }

    async fn revoke_invitation(&self, project: ProjectId, id: i64) -> StoreResult<Invitation> {
        transaction!(self, |tx| links::revoke(&tx, project, id).await?)
    }

    async fn invitation(
        &self,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<(Invitation, Project)> {
        read!(self, |c| links::find(c, hash, now))
    }

    async fn accept_invitation(
        &self,
        hash: &LinkHash,
        account: Acceptance,
        now: DateTime<Utc>,
    ) -> StoreResult<(User, Project)> {
        transaction!(self, |tx| links::accept(&tx, hash, &account, now).await?)
    }

    async fn set_alerts(
        &self,
        project: ProjectId,
        user: UserId,
        alerts: &AlertPreferences,
    ) -> StoreResult<()> {
        transaction!(self, |tx| accounts::set_alerts(&tx, project, user, alerts)
            .await?)
    }

    async fn set_export(&self, project: ProjectId, user: UserId, allowed: bool) -> StoreResult<()> {
        transaction!(self, |tx| accounts::set_export(&tx, project, user, allowed)
            .await?)
    }

    async fn save_view(
        &self,
        project: ProjectId,
        owner: UserId,
        view: &NewSavedView,
        now: DateTime<Utc>,
    ) -> StoreResult<SavedView> {
        transaction!(self, |tx| views::save(&tx, project, owner, view, now)
            .await?)
    }

    async fn saved_views(&self, project: ProjectId, user: UserId) -> StoreResult<Vec<SavedView>> {
        read!(self, |c| views::list(c, project, user))
    }

    async fn delete_view(&self, project: ProjectId, id: i64) -> StoreResult<bool> {
        transaction!(self, |tx| views::delete(&tx, project, id).await?)
    }

    async fn add_member(
        &self,
        project: ProjectId,
        user: UserId,
        role: Role,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| accounts::add_member(
            &tx, project, user, role, now
        )
        .await?)
    }

    async fn remove_member(&self, project: ProjectId, user: UserId) -> StoreResult<bool> {
        transaction!(self, |tx| accounts::remove_member(&tx, project, user)
            .await?)
    }

    async fn members(&self, project: ProjectId) -> StoreResult<Vec<Member>> {
        read!(self, |c| accounts::members(c, project))
    }

    async fn memberships(&self, user: UserId) -> StoreResult<Vec<Membership>> {
        read!(self, |c| accounts::memberships(c, user))
    }

    async fn membership(&self, user: UserId, public_id: &str) -> StoreResult<Membership> {
        read!(self, |c| accounts::membership_of(c, user, public_id))
    }

    async fn create_session(
        &self,
        user: UserId,
        hash: &SessionHash,
        device: &Device,
        now: DateTime<Utc>,
    ) -> StoreResult<Session> {
        transaction!(self, |tx| accounts::create_session(
            &tx, user, hash, device, now
        )
        .await?)
    }

    async fn sessions(&self, user: UserId, now: DateTime<Utc>) -> StoreResult<Vec<SessionInfo>> {
        read!(self, |c| accounts::sessions(c, user, now))
    }

    async fn end_other_sessions(&self, user: UserId, keep: &SessionHash) -> StoreResult<u64> {
        transaction!(self, |tx| accounts::end_other_sessions(&tx, user, keep)
            .await?)
    }

    async fn session(
        &self,
        hash: &SessionHash,
        now: DateTime<Utc>,
    ) -> StoreResult<(User, Session)> {
        read!(self, |c| accounts::session(c, hash, now))
    }

    async fn touch_session(&self, hash: &SessionHash, now: DateTime<Utc>) -> StoreResult<()> {
        transaction!(self, |tx| accounts::touch_session(&tx, hash, now).await?)
    }

    async fn end_sessions(&self, user: UserId) -> StoreResult<()> {
        transaction!(self, |tx| accounts::end_sessions_of(&tx, user).await?)
    }

    async fn record_login_failure(
        &self,
        email: &str,
        address: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        transaction!(self, |tx| accounts::record_login_failure(
            &tx, email, address, now
        )
        .await?)
    }

    async fn login_failures(
        &self,
        email: &str,
        address: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<LoginFailures> {
        read!(self, |c| accounts::login_failures(c, email, address, since))
    }
}
