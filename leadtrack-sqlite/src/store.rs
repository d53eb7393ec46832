//! The store traits on [`SqliteStore`]: each method hands its SQL to the writer thread
//! (writes, committed in groups) or to a reader (reads, on a snapshot): `read` for point
//! lookups through an index, `read_heavy` for anything that scans a project's leads.

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

use crate::fetches;
use crate::lookup;
use crate::rows::Error;
use crate::{
    SqliteStore, accounts, activity, admin, alerts, assignment, comments, drafts, jobs, leads,
    links, listing, report, rows, schema, views, webhooks,
};

#[async_trait]
impl LeadStore for SqliteStore {
    async fn ready(&self) -> StoreResult<()> {
        self.read(|conn| schema::check_current(conn).map_err(Error::from))
            .await
    }

    async fn authenticate(&self, key: &KeyHash) -> StoreResult<Project> {
        let key = *key;
        self.read(move |conn| admin::authenticate(conn, &key)).await
    }

    async fn project_by_public_id(&self, public_id: &str) -> StoreResult<Project> {
        let public_id = public_id.to_owned();
        self.read(move |conn| admin::project_by_public_id(conn, &public_id))
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
        let row = LeadRow::of(data).map_err(StoreError::backend)?;
        self.write(move |conn| leads::create(conn, project, (route, spam), row, now))
            .await
    }

    async fn import_leads(
        &self,
        project: ProjectId,
        leads: &[ImportedLead],
    ) -> StoreResult<ImportCounts> {
        let rows = LeadRow::of_imported(leads).map_err(StoreError::backend)?;
        self.write(move |conn| leads::import(conn, project, rows))
            .await
    }

    async fn mark_spam(
        &self,
        project: ProjectId,
        leads: &[LeadId],
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>> {
        let (leads, by) = (leads.to_vec(), by.clone());
        self.write(move |conn| leads::mark_spam(conn, project, &leads, &by, now))
            .await
    }

    async fn find_lead(
        &self,
        project: ProjectId,
        identifier: &LeadIdentifier,
    ) -> StoreResult<StoredLead> {
        let identifier = identifier.clone();
        self.read(move |conn| lookup::find(conn, project, &identifier))
            .await
    }

    async fn list_leads(&self, project: ProjectId, query: &LeadQuery) -> StoreResult<LeadPage> {
        let query = query.clone();
        let page = self
            .read_heavy(project, move |conn| listing::list(conn, project, &query))
            .await?;
        Ok(page.parse()?)
    }

    async fn listed_values(&self, project: ProjectId, listed: Listed) -> StoreResult<Vec<String>> {
        self.read(move |conn| listing::listed_values(conn, project, listed))
            .await
    }

    async fn status_counts(
        &self,
        project: ProjectId,
        query: &LeadQuery,
    ) -> StoreResult<Vec<(LeadStatus, u64)>> {
        let query = query.clone();
        self.read_heavy(project, move |conn| {
            listing::status_counts(conn, project, &query)
        })
        .await
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
                listing::export(conn, project, &query, after.as_ref(), limit)
            })
            .await?;
        Ok(listing::parse(records)?)
    }

    async fn report(&self, project: ProjectId, query: &ReportQuery) -> StoreResult<Report> {
        let query = *query;
        self.read_heavy(project, move |conn| report::report(conn, project, &query))
            .await
    }

    async fn update_status_from(
        &self,
        project: ProjectId,
        update: &StatusUpdate,
        by: &Actor,
        now: DateTime<Utc>,
        form: Option<FormRating>,
    ) -> StoreResult<StatusChange> {
        let update = update.clone();
        let by = by.clone();
        self.write(move |conn| jobs::update_status(conn, project, (&update, form), &by, now))
            .await
    }

    async fn retry_failed(
        &self,
        project: ProjectId,
        target: RetryTarget,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<JobId>> {
        let by = by.clone();
        self.write(move |conn| jobs::retry_failed(conn, project, target, &by, now))
            .await
    }

    async fn undo(
        &self,
        project: ProjectId,
        target: UndoTarget,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>> {
        let by = by.clone();
        self.write(move |conn| jobs::undo(conn, project, target, &by, now))
            .await
    }

    async fn lead_jobs(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<JobRecord>> {
        self.read(move |conn| jobs::lead_jobs(conn, project, lead))
            .await
    }

    async fn lead_activity(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<LeadEvent>> {
        self.read(move |conn| activity::lead_activity(conn, project, lead))
            .await
    }

    async fn last_ratings(
        &self,
        project: ProjectId,
        leads: &[LeadId],
    ) -> StoreResult<Vec<(LeadId, LeadEvent)>> {
        let leads = leads.to_vec();
        self.read(move |conn| activity::last_ratings(conn, project, &leads))
            .await
    }

    async fn delete_lead(
        &self,
        project: ProjectId,
        lead: LeadId,
        by: &Attribution,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let by = by.clone();
        self.write(move |conn| activity::delete_lead(conn, project, lead, &by, now))
            .await
    }

    async fn record_project_event(
        &self,
        project: ProjectId,
        by: &Attribution,
        event: &ProjectActivity,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let (by, event) = (by.clone(), event.clone());
        self.write(move |conn| activity::record_project_event(conn, project, &by, &event, now))
            .await
    }

    async fn project_history(
        &self,
        project: ProjectId,
        before: Option<i64>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<ProjectEvent>> {
        self.read(move |conn| activity::project_history(conn, project, before, limit, now))
            .await
    }

    async fn assign(
        &self,
        project: ProjectId,
        leads: &[LeadId],
        to: Option<UserId>,
        by: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<LeadId>> {
        let (leads, by) = (leads.to_vec(), by.clone());
        self.write(move |conn| assignment::assign(conn, (project, &leads), to, &by, now))
            .await
    }

    async fn add_comment(
        &self,
        project: ProjectId,
        lead: LeadId,
        author: &Actor,
        text: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment> {
        let (author, text) = (author.clone(), text.to_owned());
        self.write(move |conn| comments::add(conn, (project, lead), &author, &text, now))
            .await
    }

    async fn comments(&self, project: ProjectId, lead: LeadId) -> StoreResult<Vec<Comment>> {
        self.read(move |conn| comments::list(conn, project, lead))
            .await
    }

    async fn edit_comment(
        &self,
        project: ProjectId,
        comment: (LeadId, i64),
        author: &Actor,
        text: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Comment> {
        let (author, text) = (author.clone(), text.to_owned());
        self.write(move |conn| comments::edit(conn, project, comment, &author, &text, now))
            .await
    }

    async fn delete_comment(
        &self,
        project: ProjectId,
        comment: (LeadId, i64),
        author: &Actor,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let author = author.clone();
        self.write(move |conn| comments::delete(conn, project, comment, &author, now))
            .await
    }

    async fn save_draft(&self, project: ProjectId, draft: &Draft) -> StoreResult<()> {
        let draft = draft.clone();
        self.write(move |conn| drafts::save(conn, project, &draft))
            .await
    }

    async fn discard_draft(&self, project: ProjectId, lead: LeadId) -> StoreResult<bool> {
        self.write(move |conn| drafts::discard(conn, project, lead))
            .await
    }

    async fn drafts(&self, project: ProjectId) -> StoreResult<Vec<Draft>> {
        self.read(move |conn| drafts::list(conn, project)).await
    }
}

#[async_trait]
impl Admin for SqliteStore {
    async fn create_project(
        &self,
        project: NewProject,
        now: DateTime<Utc>,
    ) -> StoreResult<Project> {
        self.write(move |conn| admin::create_project(conn, project, now))
            .await
    }

    async fn projects(&self) -> StoreResult<Vec<Project>> {
        self.read(admin::projects).await
    }

    async fn project(&self, public_id: &str) -> StoreResult<Project> {
        self.project_by_public_id(public_id).await
    }

    async fn update_project(
        &self,
        project: ProjectId,
        settings: ProjectSettings,
    ) -> StoreResult<Project> {
        self.write(move |conn| admin::update_project(conn, project, settings))
            .await
    }

    async fn set_project_active(&self, project: ProjectId, active: bool) -> StoreResult<Project> {
        self.write(move |conn| admin::set_project_active(conn, project, active))
            .await
    }

    async fn insert_api_key(
        &self,
        project: ProjectId,
        key: &GeneratedKey,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo> {
        let key = key.clone();
        self.write(move |conn| admin::insert_api_key(conn, project, &key, now))
            .await
    }

    async fn api_keys(&self, project: ProjectId) -> StoreResult<Vec<ApiKeyInfo>> {
        self.read(move |conn| admin::api_keys(conn, project)).await
    }

    async fn revoke_api_key(
        &self,
        project: ProjectId,
        key: &KeyRef,
        now: DateTime<Utc>,
    ) -> StoreResult<ApiKeyInfo> {
        let key = key.clone();
        self.write(move |conn| admin::revoke_api_key(conn, project, &key, now))
            .await
    }

    async fn create_label(
        &self,
        project: ProjectId,
        label: NewLabel,
        now: DateTime<Utc>,
    ) -> StoreResult<ConversionLabel> {
        self.write(move |conn| admin::create_label(conn, project, label, now))
            .await
    }

    async fn labels(&self, project: ProjectId) -> StoreResult<Vec<ConversionLabel>> {
        self.read(move |conn| admin::labels(conn, project)).await
    }

    async fn label(&self, project: ProjectId, id: Uuid) -> StoreResult<ConversionLabel> {
        self.read(move |conn| admin::label(conn, project, id)).await
    }

    async fn update_label(
        &self,
        project: ProjectId,
        id: Uuid,
        label: NewLabel,
    ) -> StoreResult<ConversionLabel> {
        self.write(move |conn| admin::update_label(conn, project, id, label))
            .await
    }

    async fn set_label_archived(
        &self,
        project: ProjectId,
        id: Uuid,
        archived: bool,
    ) -> StoreResult<ConversionLabel> {
        self.write(move |conn| admin::set_label_archived(conn, project, id, archived))
            .await
    }

    async fn delete_label(&self, project: ProjectId, id: Uuid) -> StoreResult<()> {
        self.write(move |conn| admin::delete_label(conn, project, id))
            .await
    }

    async fn reorder_labels(
        &self,
        project: ProjectId,
        order: &[Uuid],
    ) -> StoreResult<Vec<ConversionLabel>> {
        let order = order.to_vec();
        self.write(move |conn| admin::reorder_labels(conn, project, &order))
            .await
    }

    async fn chat_channels(&self, project: ProjectId) -> StoreResult<Vec<ChatChannel>> {
        let vault = self.vault();
        self.read(move |conn| alerts::channels(conn, &vault, project))
            .await
    }

    async fn oauth_grant(
        &self,
        project: ProjectId,
        provider: Provider,
    ) -> StoreResult<Option<OAuthGrant>> {
        let vault = self.vault();
        self.read(move |conn| admin::oauth_grant(conn, &vault, project, provider))
            .await
    }

    async fn set_oauth_grant(
        &self,
        project: ProjectId,
        provider: Provider,
        grant: Option<&OAuthGrant>,
    ) -> StoreResult<()> {
        let (vault, grant) = (self.vault(), grant.cloned());
        self.write(move |conn| {
            admin::set_oauth_grant(conn, &vault, project, provider, grant.as_ref())
        })
        .await
    }

    async fn lead_source(
        &self,
        project: ProjectId,
        kind: SourceKind,
    ) -> StoreResult<Option<LeadSource>> {
        let vault = self.vault();
        self.read(move |conn| admin::lead_source(conn, &vault, project, kind))
            .await
    }

    async fn lead_sources_routed(
        &self,
        kind: SourceKind,
        routing: &str,
    ) -> StoreResult<Vec<(ProjectId, LeadSource)>> {
        let (vault, routing) = (self.vault(), routing.to_owned());
        self.read(move |conn| admin::lead_sources_routed(conn, &vault, kind, &routing))
            .await
    }

    async fn set_lead_source(
        &self,
        project: ProjectId,
        kind: SourceKind,
        source: Option<&LeadSource>,
    ) -> StoreResult<()> {
        let (vault, source) = (self.vault(), source.cloned());
        self.write(move |conn| admin::set_lead_source(conn, &vault, project, kind, source.as_ref()))
            .await
    }

    async fn save_inbound_hook(&self, hook: &InboundHook) -> StoreResult<()> {
        let (vault, hook) = (self.vault(), hook.clone());
        self.write(move |conn| admin::save_inbound_hook(conn, &vault, &hook))
            .await
    }

    async fn inbound_hooks(&self, project: ProjectId) -> StoreResult<Vec<InboundHook>> {
        let vault = self.vault();
        self.read(move |conn| admin::inbound_hooks(conn, &vault, (Some(project), None)))
            .await
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

    async fn remove_inbound_hook(&self, project: ProjectId, id: &str) -> StoreResult<bool> {
        let id = id.to_owned();
        self.write(move |conn| admin::remove_inbound_hook(conn, project, &id))
            .await
    }

    async fn set_chat_channel(
        &self,
        project: ProjectId,
        kind: ChatKind,
        url: Option<&str>,
    ) -> StoreResult<()> {
        let url = url.map(str::to_owned);
        let vault = self.vault();
        self.write(move |conn| alerts::set_channel(conn, &vault, project, kind, url.as_deref()))
            .await
    }

    async fn round_robin(&self, project: ProjectId) -> StoreResult<Option<RoundRobin>> {
        self.read(move |conn| assignment::rule(conn, project)).await
    }

    async fn set_round_robin(
        &self,
        project: ProjectId,
        rule: Option<&RoundRobin>,
    ) -> StoreResult<()> {
        let rule = rule.cloned();
        self.write(move |conn| assignment::set_rule(conn, project, rule.as_ref()))
            .await
    }

    async fn integrations(&self, project: ProjectId) -> StoreResult<Integrations> {
        let vault = self.vault();
        self.read(move |conn| admin::integrations(conn, &vault, project))
            .await
    }

    async fn set_integration(
        &self,
        project: ProjectId,
        settings: IntegrationSettings,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let vault = self.vault();
        self.write(move |conn| admin::set_integration(conn, &vault, project, settings, now))
            .await
    }

    async fn remove_integration(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
    ) -> StoreResult<bool> {
        self.write(move |conn| admin::remove_integration(conn, project, kind))
            .await
    }

    async fn last_attempts(&self, project: ProjectId) -> StoreResult<Vec<Attempt>> {
        self.read(move |conn| admin::last_attempts(conn, project))
            .await
    }

    async fn create_webhook(
        &self,
        project: ProjectId,
        webhook: NewWebhook,
        now: DateTime<Utc>,
    ) -> StoreResult<Webhook> {
        let vault = self.vault();
        self.write(move |conn| webhooks::create(conn, &vault, project, webhook, now))
            .await
    }

    async fn webhooks(&self, project: ProjectId) -> StoreResult<Vec<WebhookStatus>> {
        let vault = self.vault();
        self.read(move |conn| webhooks::list(conn, &vault, project))
            .await
    }

    async fn remove_webhook(&self, project: ProjectId, id: Uuid) -> StoreResult<bool> {
        self.write(move |conn| webhooks::remove(conn, project, id))
            .await
    }
}

#[async_trait]
impl JobQueue for SqliteStore {
    async fn claim_job(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedJob>> {
        let vault = self.vault();
        self.write(move |conn| jobs::claim(conn, &vault, now, lease_for))
            .await
    }

    async fn queue_depth(&self, now: DateTime<Utc>) -> StoreResult<QueueDepths> {
        let now_ms = now.timestamp_millis();
        self.read(move |conn| {
            Ok(QueueDepths {
                jobs: rows::depth(conn, "jobs", now_ms)?,
                webhook_events: rows::depth(conn, "webhook_events", now_ms)?,
            })
        })
        .await
    }

    async fn record_attempt(&self, job: JobId, lease: Uuid, attempt: &Attempt) -> StoreResult<()> {
        let attempt = attempt.clone();
        self.write(move |conn| jobs::record_attempt(conn, job, lease, &attempt))
            .await
    }

    async fn reschedule_job(
        &self,
        job: JobId,
        lease: Uuid,
        due_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.write(move |conn| jobs::reschedule(conn, job, lease, due_at))
            .await
    }

    async fn finish_job(
        &self,
        job: JobId,
        lease: Uuid,
        now: DateTime<Utc>,
    ) -> StoreResult<LeadStatus> {
        self.write(move |conn| jobs::finish(conn, job, lease, now))
            .await
    }

    async fn take_alerts(&self, limit: u32) -> StoreResult<Vec<QueuedAlert>> {
        self.write(move |conn| alerts::take(conn, limit)).await
    }

    async fn rotate_refresh_token(
        &self,
        project: ProjectId,
        kind: IntegrationKind,
        old: &Secret,
        new: Secret,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let old = old.clone();
        let vault = self.vault();
        self.write(move |conn| {
            admin::rotate_refresh_token(conn, &vault, project, kind, &old, new, now)
        })
        .await
    }

    async fn queue_lead_fetch(
        &self,
        project: ProjectId,
        fetch: &NewLeadFetch,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let fetch = fetch.clone();
        self.write(move |conn| fetches::queue(conn, project, &fetch, now))
            .await
    }

    async fn claim_lead_fetch(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedLeadFetch>> {
        self.write(move |conn| fetches::claim(conn, now, lease_for))
            .await
    }

    async fn finish_lead_fetch(
        &self,
        id: i64,
        lease: Uuid,
        outcome: &FetchOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let outcome = outcome.clone();
        self.write(move |conn| fetches::finish(conn, id, lease, &outcome, now))
            .await
    }

    async fn claim_webhook_event(
        &self,
        now: DateTime<Utc>,
        lease_for: Duration,
    ) -> StoreResult<Option<ClaimedWebhookEvent>> {
        let vault = self.vault();
        self.write(move |conn| webhooks::claim(conn, &vault, now, lease_for))
            .await
    }

    async fn record_webhook_attempt(
        &self,
        id: i64,
        lease: Uuid,
        attempt: &WebhookAttempt,
    ) -> StoreResult<()> {
        let attempt = attempt.clone();
        self.write(move |conn| webhooks::record_attempt(conn, id, lease, &attempt))
            .await
    }
}

#[async_trait]
impl Accounts for SqliteStore {
    async fn create_user(&self, user: NewUser, now: DateTime<Utc>) -> StoreResult<User> {
        self.write(move |conn| accounts::create_user(conn, user, now))
            .await
    }

    async fn users(&self) -> StoreResult<Vec<User>> {
        self.read(accounts::users).await
    }

    async fn user_by_email(&self, email: &str) -> StoreResult<User> {
        let email = email.to_owned();
        self.read(move |conn| accounts::user_by_email(conn, &email))
            .await
    }

    async fn password_hash(&self, user: UserId) -> StoreResult<PasswordHash> {
        self.read(move |conn| accounts::password_hash(conn, user))
            .await
    }

    async fn set_password(&self, user: UserId, hash: &PasswordHash) -> StoreResult<()> {
        let hash = hash.clone();
        self.write(move |conn| accounts::set_password(conn, user, &hash))
            .await
    }

    async fn set_user_disabled(&self, user: UserId, disabled: bool) -> StoreResult<User> {
        self.write(move |conn| accounts::set_user_disabled(conn, user, disabled))
            .await
    }

    async fn set_preferences(&self, user: UserId, preferences: &Preferences) -> StoreResult<()> {
        let preferences = preferences.clone();
        self.write(move |conn| accounts::set_preferences(conn, user, &preferences))
            .await
    }

    async fn set_name(&self, user: UserId, name: &str) -> StoreResult<User> {
        let name = name.to_owned();
        self.write(move |conn| accounts::set_name(conn, user, &name))
            .await
    }

    async fn issue_link(
        &self,
        user: UserId,
        link: &AccountLink,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let (link, hash) = (link.clone(), *hash);
        self.write(move |conn| links::issue(conn, user, &link, &hash, now))
            .await
    }

    async fn reset_password(
        &self,
        hash: &LinkHash,
        password: &PasswordHash,
        now: DateTime<Utc>,
    ) -> StoreResult<User> {
        let (hash, password) = (*hash, password.clone());
        self.write(move |conn| links::reset_password(conn, &hash, &password, now))
            .await
    }

    async fn confirm_email(&self, hash: &LinkHash, now: DateTime<Utc>) -> StoreResult<User> {
        let hash = *hash;
        self.write(move |conn| links::confirm_email(conn, &hash, now))
            .await
    }

    async fn invite(
        &self,
        project: ProjectId,
        invitation: &NewInvitation,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<Invitation> {
        let (invitation, hash) = (invitation.clone(), *hash);
        self.write(move |conn| links::invite(conn, project, &invitation, &hash, now))
            .await
    }

    async fn invitations(&self, project: ProjectId) -> StoreResult<Vec<Invitation>> {
        self.read(move |conn| links::invitations(conn, project))
            .await
    }

    async fn renew_invitation(
        &self,
        project: ProjectId,
        id: i64,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<Invitation> {
        let hash = *hash;
        self.write(move |conn| links::renew(conn, project, id, &hash, now))
            .await
    }

    async fn revoke_invitation(&self, project: ProjectId, id: i64) -> StoreResult<Invitation> {
        self.write(move |conn| links::revoke(conn, project, id))
            .await
    }

    async fn invitation(
        &self,
        hash: &LinkHash,
        now: DateTime<Utc>,
    ) -> StoreResult<(Invitation, Project)> {
        let hash = *hash;
        self.read(move |conn| links::find(conn, &hash, now)).await
    }

    async fn accept_invitation(
        &self,
        hash: &LinkHash,
        account: Acceptance,
        now: DateTime<Utc>,
    ) -> StoreResult<(User, Project)> {
        let hash = *hash;
        self.write(move |conn| links::accept(conn, &hash, &account, now))
            .await
    }

    async fn set_alerts(
        &self,
        project: ProjectId,
        user: UserId,
        alerts: &AlertPreferences,
    ) -> StoreResult<()> {
        let alerts = alerts.clone();
        self.write(move |conn| accounts::set_alerts(conn, project, user, &alerts))
            .await
    }

    async fn set_export(&self, project: ProjectId, user: UserId, allowed: bool) -> StoreResult<()> {
        self.write(move |conn| accounts::set_export(conn, project, user, allowed))
            .await
    }

    async fn save_view(
        &self,
        project: ProjectId,
        owner: UserId,
        view: &NewSavedView,
        now: DateTime<Utc>,
    ) -> StoreResult<SavedView> {
        let view = view.clone();
        self.write(move |conn| views::save(conn, project, owner, &view, now))
            .await
    }

    async fn saved_views(&self, project: ProjectId, user: UserId) -> StoreResult<Vec<SavedView>> {
        self.read(move |conn| views::list(conn, project, user))
            .await
    }

    async fn delete_view(&self, project: ProjectId, id: i64) -> StoreResult<bool> {
        self.write(move |conn| views::delete(conn, project, id))
            .await
    }

    async fn add_member(
        &self,
        project: ProjectId,
        user: UserId,
        role: Role,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.write(move |conn| accounts::add_member(conn, project, user, role, now))
            .await
    }

    async fn remove_member(&self, project: ProjectId, user: UserId) -> StoreResult<bool> {
        self.write(move |conn| accounts::remove_member(conn, project, user))
            .await
    }

    async fn members(&self, project: ProjectId) -> StoreResult<Vec<Member>> {
        self.read(move |conn| accounts::members(conn, project))
            .await
    }

    async fn memberships(&self, user: UserId) -> StoreResult<Vec<Membership>> {
        self.read(move |conn| accounts::memberships(conn, user))
            .await
    }

    async fn membership(&self, user: UserId, public_id: &str) -> StoreResult<Membership> {
        let public_id = public_id.to_owned();
        self.read(move |conn| accounts::membership_of(conn, user, &public_id))
            .await
    }

    async fn create_session(
        &self,
        user: UserId,
        hash: &SessionHash,
        device: &Device,
        now: DateTime<Utc>,
    ) -> StoreResult<Session> {
        let (hash, device) = (*hash, device.clone());
        self.write(move |conn| accounts::create_session(conn, user, &hash, &device, now))
            .await
    }

    async fn sessions(&self, user: UserId, now: DateTime<Utc>) -> StoreResult<Vec<SessionInfo>> {
        self.read(move |conn| accounts::sessions(conn, user, now))
            .await
    }

    async fn end_other_sessions(&self, user: UserId, keep: &SessionHash) -> StoreResult<u64> {
        let keep = *keep;
        self.write(move |conn| accounts::end_other_sessions(conn, user, &keep))
            .await
    }

    async fn session(
        &self,
        hash: &SessionHash,
        now: DateTime<Utc>,
    ) -> StoreResult<(User, Session)> {
        let hash = *hash;
        self.read(move |conn| accounts::session(conn, &hash, now))
            .await
    }

    async fn touch_session(&self, hash: &SessionHash, now: DateTime<Utc>) -> StoreResult<()> {
        let hash = *hash;
        self.write(move |conn| accounts::touch_session(conn, &hash, now))
            .await
    }

    async fn end_sessions(&self, user: UserId) -> StoreResult<()> {
        self.write(move |conn| accounts::end_sessions_of(conn, user))
            .await
    }

    async fn record_login_failure(
        &self,
        email: &str,
        address: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let (email, address) = (email.to_owned(), address.to_owned());
        self.write(move |conn| accounts::record_login_failure(conn, &email, &address, now))
            .await
    }

    async fn login_failures(
        &self,
        email: &str,
        address: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<LoginFailures> {
        let (email, address) = (email.to_owned(), address.to_owned());
        self.read(move |conn| accounts::login_failures(conn, &email, &address, since))
            .await
    }
}
