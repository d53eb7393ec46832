//! The worker: claims due conversion jobs from any [`JobQueue`], delivers each pending
//! delivery to its platform, records every attempt, and reschedules or finishes the job;
//! and claims due lead webhook events, posts each, and records the attempt.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use leadtrack_core::conversion;
use leadtrack_core::integration::{Integrations, Secret};
use leadtrack_core::job::{Attempt, ClaimedJob, Delivery};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::target::Targets;
use leadtrack_core::types::{AttemptOutcome, DeliveryAction, DeliveryState, IntegrationKind};
use leadtrack_core::webhook::WebhookAttempt;
use leadtrack_core::{JobQueue, StoreError, StoreResult};
use tokio::sync::watch;

use crate::retry::{RetryPolicy, random_unit};
use crate::{
    ga4, google_ads, linkedin, meta, microsoft_ads, pinterest, reddit, snapchat, tiktok, webhook,
};
use leadtrack_outbound::Outbound;
use leadtrack_platforms::Outcome;
use leadtrack_platforms::oauth::TokenCache;

/// How the worker runs.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Jobs delivered at once. 4 by default.
    pub concurrency: usize,
    /// How often an idle worker looks for due jobs. 1 second by default. A store that
    /// hears of new work ([`JobQueue::wait_for_work`]) wakes it sooner.
    pub poll_interval: Duration,
    /// How long a claimed job stays with this worker; a worker that dies loses its jobs to
    /// others when this runs out. 5 minutes by default.
    pub lease: Duration,
    /// Time limit of each request to a platform. 30 seconds by default.
    pub request_timeout: Duration,
    /// When failed deliveries are tried again.
    pub retry: RetryPolicy,
    /// The addresses the worker may call: the operator's exceptions to core's rule. None
    /// by default.
    pub targets: Targets,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            concurrency: 4,
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(5 * 60),
            request_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            targets: Targets::default(),
        }
    }
}

/// Sends one delivery of a job to its platform: the HTTP client and the Google token cache.
pub struct Deliverer {
    http: Outbound,
    tokens: TokenCache,
}

impl Deliverer {
    /// A deliverer that calls the addresses `targets` allow, with requests that time out
    /// after `timeout`.
    pub fn new(targets: Targets, timeout: Duration) -> Self {
        Self {
            http: Outbound::new(targets, timeout),
            tokens: TokenCache::default(),
        }
    }

    /// Does `delivery` of `job` at its platform, with the settings the job was claimed
    /// with: sends the conversion, or restates its value.
    pub async fn deliver(
        &self,
        delivery: &Delivery,
        job: &ClaimedJob,
        now: chrono::DateTime<Utc>,
    ) -> Outcome {
        let (kind, action) = (delivery.integration, delivery.action);
        let integrations = &job.integrations;
        let disconnected = || Outcome::skipped(format!("{kind} is no longer connected"));
        let able = match action {
            DeliveryAction::Send => true,
            DeliveryAction::Restate => conversion::can_restate(kind),
            DeliveryAction::Retract => conversion::can_retract(kind),
        };
        if !able {
            // Planned deliveries never ask this; a row from elsewhere might.
            return Outcome::skipped(format!("{kind} cannot {action} a conversion"));
        }
        match kind {
            IntegrationKind::Ga4 => match &integrations.ga4 {
                Some(settings) => ga4::deliver(&self.http, settings, job, now).await,
                None => disconnected(),
            },
            IntegrationKind::Meta => match &integrations.meta {
                Some(settings) => meta::deliver(&self.http, settings, job, now).await,
                None => disconnected(),
            },
            IntegrationKind::GoogleAds => match &integrations.google_ads {
                // A restatement is the same event again, with the same transaction id.
                Some(settings) => {
                    google_ads::deliver(&self.http, &self.tokens, settings, job).await
                }
                None => disconnected(),
            },
            IntegrationKind::MicrosoftAds => match &integrations.microsoft_ads {
                Some(settings) => {
                    let account = (&self.http, &self.tokens, settings);
                    microsoft_ads::deliver(account, job, action, now).await
                }
                None => disconnected(),
            },
            IntegrationKind::Linkedin => match &integrations.linkedin {
                Some(settings) => linkedin::deliver(&self.http, &self.tokens, settings, job).await,
                None => disconnected(),
            },
            IntegrationKind::Tiktok => match &integrations.tiktok {
                Some(settings) => tiktok::deliver(&self.http, settings, job, now).await,
                None => disconnected(),
            },
            IntegrationKind::Reddit => match &integrations.reddit {
                Some(settings) => reddit::deliver(&self.http, settings, job, now).await,
                None => disconnected(),
            },
            IntegrationKind::Pinterest => match &integrations.pinterest {
                Some(settings) => pinterest::deliver(&self.http, settings, job, now).await,
                None => disconnected(),
            },
            IntegrationKind::Snapchat => match &integrations.snapchat {
                Some(settings) => snapchat::deliver(&self.http, settings, job, now).await,
                None => disconnected(),
            },
            IntegrationKind::Webhook => match &integrations.webhook {
                Some(settings) => webhook::deliver(&self.http, settings, job, action, now).await,
                None => disconnected(),
            },
        }
    }

    /// The refresh token `kind`'s platform issued in place of the one in `integrations`,
    /// if it did since this was last asked: `(old, new)`, for the store to keep.
    pub fn rotated_refresh_token(
        &self,
        kind: IntegrationKind,
        integrations: &Integrations,
    ) -> Option<(Secret, Secret)> {
        let old = integrations.refresh_token(kind)?;
        let new = self.tokens.take_rotated(old.expose())?;
        Some((old.clone(), Secret::new(new)))
    }
}

/// Delivers conversion jobs from `S`. Cheap to clone: clones share the HTTP client.
pub struct Worker<S> {
    store: S,
    deliverer: Arc<Deliverer>,
    config: Arc<WorkerConfig>,
}

impl<S: Clone> Clone for Worker<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            deliverer: Arc::clone(&self.deliverer),
            config: Arc::clone(&self.config),
        }
    }
}

impl<S: JobQueue + Clone> Worker<S> {
    /// A worker on `store`.
    pub fn new(store: S, config: WorkerConfig) -> Self {
        Self {
            store,
            deliverer: Arc::new(Deliverer::new(
                config.targets.clone(),
                config.request_timeout,
            )),
            config: Arc::new(config),
        }
    }

    /// Runs [`WorkerConfig::concurrency`] delivery loops until `shutdown` resolves. Jobs in
    /// progress then finish before this returns; queued jobs stay queued for the next run.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) {
        let (stop, stopped) = watch::channel(false);
        let loops: Vec<_> = (0..self.config.concurrency.max(1))
            .map(|_| {
                let worker = self.clone();
                let stopped = stopped.clone();
                tokio::spawn(async move { worker.run_loop(stopped).await })
            })
            .collect();
        shutdown.await;
        tracing::info!("worker stopping; jobs in progress finish first");
        let _ = stop.send(true);
        for handle in loops {
            if let Err(err) = handle.await {
                tracing::error!(error = %err, "a delivery loop ended abnormally");
            }
        }
        tracing::info!("worker stopped");
    }

    async fn run_loop(&self, mut stopped: watch::Receiver<bool>) {
        while !*stopped.borrow() {
            let looked = self.run_once().await;
            metrics::counter!("leadtrack_worker_polls_total").increment(1);
            match looked {
                Ok(true) => continue,
                Ok(false) => {}
                Err(err) => tracing::error!(error = %err, "could not process a job"),
            }
            let poll = self.config.poll_interval;
            tokio::select! {
                _ = stopped.changed() => {}
                () = async {
                    if !self.store.wait_for_work(poll).await {
                        tokio::time::sleep(poll).await;
                    }
                } => {}
            }
        }
    }

    /// Processes the job due soonest, then posts the lead webhook event due soonest;
    /// `false` when neither was due. A failure of the first does not keep the second from
    /// running; the first failure is returned.
    pub async fn run_once(&self) -> StoreResult<bool> {
        let job = self.run_job().await;
        let event = self.run_webhook_event().await;
        Ok(job? | event?)
    }

    fn lease(&self) -> StoreResult<chrono::Duration> {
        chrono::Duration::from_std(self.config.lease)
            .map_err(|_| StoreError::Invalid("the lease is too long".to_owned()))
    }

    /// Claims the job due soonest and processes it; `false` when none is due.
    pub async fn run_job(&self) -> StoreResult<bool> {
        let Some(claimed) = self.store.claim_job(Utc::now(), self.lease()?).await? else {
            return Ok(false);
        };
        match self.process(&claimed).await {
            Err(StoreError::Conflict(Conflict::LeaseLost(job))) => {
                tracing::warn!(job = job.0, "lease lost; another worker has the job");
                Ok(true)
            }
            other => other.map(|()| true),
        }
    }

    /// Claims the lead webhook event due soonest, posts it and records the attempt; `false`
    /// when none is due.
    pub async fn run_webhook_event(&self) -> StoreResult<bool> {
        let Some(claimed) = self
            .store
            .claim_webhook_event(Utc::now(), self.lease()?)
            .await?
        else {
            return Ok(false);
        };
        let started = Instant::now();
        let outcome = webhook::deliver_event(&self.deliverer.http, &claimed, Utc::now()).await;
        let attempts = claimed.attempts + 1;
        let attempt = self.settle(attempts, claimed.occurred_at, outcome);
        record_delivery("lead_webhook", attempt.outcome, started.elapsed());
        tracing::info!(
            webhook = %claimed.webhook.id,
            event = %claimed.event,
            delivery = claimed.id,
            lead = claimed.lead_id.0,
            attempt = attempts,
            outcome = attempt.outcome.as_ref(),
            http_status = attempt.http_status,
            error = attempt.error.as_deref().unwrap_or(""),
            "webhook event attempt"
        );
        let recorded = self
            .store
            .record_webhook_attempt(claimed.id, claimed.lease.token, &attempt)
            .await;
        match recorded {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(Conflict::WebhookLeaseLost(id))) => {
                tracing::warn!(delivery = id, "lease lost; another worker has the event");
                Ok(true)
            }
            Err(StoreError::NotFound(Entity::Webhook)) => {
                tracing::info!(delivery = claimed.id, "the webhook was removed meanwhile");
                Ok(true)
            }
            Err(err) => Err(err),
        }
    }

    /// Delivers the job's due deliveries concurrently, records each attempt, then finishes
    /// the job or puts it back until its next retry.
    async fn process(&self, claimed: &ClaimedJob) -> StoreResult<()> {
        let job = &claimed.job;
        let token = claimed.lease.token;
        let now = Utc::now();
        let pending: Vec<_> = claimed
            .deliveries
            .iter()
            .filter(|d| d.state == DeliveryState::Pending)
            .collect();
        let (due, waiting): (Vec<_>, Vec<_>) = pending
            .into_iter()
            .partition(|d| d.next_attempt_at.is_none_or(|at| at <= now));
        // Each attempt is recorded as soon as its platform answers, so a worker that dies
        // midway resends only what it had not recorded.
        let mut in_flight: FuturesUnordered<_> = due
            .iter()
            .map(|delivery| async move {
                let started = Instant::now();
                let outcome = self.deliverer.deliver(delivery, claimed, now).await;
                (*delivery, outcome, started.elapsed())
            })
            .collect();
        let mut next_due = waiting.iter().filter_map(|d| d.next_attempt_at).min();
        while let Some((delivery, outcome, took)) = in_flight.next().await {
            let attempts = delivery.attempts + 1;
            let attempt = self.attempt(delivery.integration, attempts, claimed, outcome);
            record_delivery(delivery.integration.into(), attempt.outcome, took);
            tracing::info!(
                job = job.id.0,
                lead = job.lead_id.0,
                integration = %delivery.integration,
                attempt = attempts,
                outcome = attempt.outcome.as_ref(),
                http_status = attempt.http_status,
                error = attempt.error.as_deref().unwrap_or(""),
                "delivery attempt"
            );
            if let Some(retry_at) = attempt.retry_at {
                next_due = Some(next_due.map_or(retry_at, |at| at.min(retry_at)));
            }
            self.store.record_attempt(job.id, token, &attempt).await?;
            self.keep_rotated_refresh_token(claimed, delivery.integration)
                .await;
        }
        match next_due {
            Some(at) => self.store.reschedule_job(job.id, token, at).await,
            None => {
                let status = self.store.finish_job(job.id, token, Utc::now()).await?;
                tracing::info!(job = job.id.0, lead = job.lead_id.0, status = %status, "job done");
                Ok(())
            }
        }
    }

    /// Stores the refresh token a platform rotated while delivering to `kind`, so that the
    /// integration keeps working past the life of the token it was connected with. A
    /// failure to store is logged: the old token still works for a while.
    async fn keep_rotated_refresh_token(&self, claimed: &ClaimedJob, kind: IntegrationKind) {
        let Some((old, new)) = self
            .deliverer
            .rotated_refresh_token(kind, &claimed.integrations)
        else {
            return;
        };
        let project = claimed.project.id;
        match self
            .store
            .rotate_refresh_token(project, kind, &old, new, Utc::now())
            .await
        {
            Ok(kept) => {
                tracing::info!(project = project.0, integration = %kind, kept, "refresh token rotated");
            }
            Err(err) => {
                tracing::warn!(project = project.0, integration = %kind, error = %err, "could not store a rotated refresh token");
            }
        }
    }

    /// The attempt to record for an outcome; a retry beyond the policy fails for good.
    fn attempt(
        &self,
        integration: IntegrationKind,
        attempts: u32,
        claimed: &ClaimedJob,
        outcome: Outcome,
    ) -> Attempt {
        let settled = self.settle(attempts, claimed.job.created_at, outcome);
        Attempt {
            integration,
            at: settled.at,
            outcome: settled.outcome,
            http_status: settled.http_status,
            error: settled.error,
            retry_at: settled.retry_at,
            batch: None,
        }
    }

    /// How the `attempts`th attempt at something that happened at `happened` ends, made
    /// now: a retry beyond the policy fails for good.
    fn settle(
        &self,
        attempts: u32,
        happened: chrono::DateTime<Utc>,
        outcome: Outcome,
    ) -> WebhookAttempt {
        let at = Utc::now();
        let (outcome, http_status, error, retry_at) = match outcome {
            Outcome::Delivered { status } => (AttemptOutcome::Delivered, Some(status), None, None),
            Outcome::Skipped { reason } => (AttemptOutcome::Skipped, None, Some(reason), None),
            Outcome::Failed { status, error } => {
                (AttemptOutcome::Failed, status, Some(error), None)
            }
            Outcome::Retry {
                status,
                error,
                retry_after,
            } => match self.config.retry.next_attempt(
                attempts,
                at,
                happened,
                retry_after,
                random_unit(),
            ) {
                Some(next) => (AttemptOutcome::Retry, status, Some(error), Some(next)),
                None => (
                    AttemptOutcome::Failed,
                    status,
                    Some(format!("{error} (gave up after {attempts} attempts)")),
                    None,
                ),
            },
        };
        WebhookAttempt {
            at,
            outcome,
            http_status,
            error,
            retry_at,
        }
    }
}

/// Gives the worker's series their help text.
pub fn describe_metrics() {
    metrics::describe_counter!(
        "leadtrack_worker_polls_total",
        "Times the worker looked for due jobs and lead webhook events"
    );
    metrics::describe_counter!(
        "leadtrack_deliveries_total",
        "Delivery attempts, by platform and outcome (delivered, retry, failed, skipped)"
    );
    metrics::describe_histogram!(
        "leadtrack_delivery_duration_seconds",
        metrics::Unit::Seconds,
        "How long platforms took to answer a delivery, by platform"
    );
}

/// Counts an attempt to deliver to `platform` (an integration's name, or `lead_webhook`)
/// by its outcome, and how long the platform took to answer:
/// `leadtrack_deliveries_total{platform, outcome}` and
/// `leadtrack_delivery_duration_seconds{platform}`, through the `metrics` facade.
fn record_delivery(platform: &'static str, outcome: AttemptOutcome, took: std::time::Duration) {
    let outcome: &'static str = outcome.into();
    metrics::counter!("leadtrack_deliveries_total", "platform" => platform, "outcome" => outcome)
        .increment(1);
    metrics::histogram!("leadtrack_delivery_duration_seconds", "platform" => platform)
        .record(took.as_secs_f64());
}
