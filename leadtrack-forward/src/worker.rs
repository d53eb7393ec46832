//! The worker: claims due conversion jobs from any [`JobQueue`], delivers each pending
//! delivery to its platform, records every attempt, and reschedules or finishes the job;
//! claims due lead webhook events, posts each, and records the attempt; and claims a CRM
//! sync's due events together and syncs them.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, FuturesUnordered};
use futures_util::{FutureExt, StreamExt};
use leadtrack_core::api::WebhookBody;
use leadtrack_core::job::{Attempt, ClaimedJob};
use leadtrack_core::store::{Conflict, Entity};
use leadtrack_core::target::Targets;
use leadtrack_core::types::{AttemptOutcome, DeliveryState, IntegrationKind};
use leadtrack_core::webhook::{ClaimedWebhookEvent, Webhook, WebhookAttempt, WebhookKind};
use leadtrack_core::{JobQueue, LeadWebhooks, StoreError, StoreResult};
use tokio::sync::watch;

use crate::batch::{Due, Groups, Sent, send_group};
use crate::deliverer::{Deliverer, Plan, goes_alone};
use crate::retry::{RetryPolicy, random_unit};
use crate::{hubspot, pipedrive, webhook};
use leadtrack_platforms::Outcome;

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
    /// The most jobs one loop claims and sends together, their events batched per
    /// destination. 2,000 by default, the largest batch a platform takes.
    pub batch_jobs: usize,
    /// How long a loop that found several jobs due may wait for more to join them, from its
    /// first claim, while they keep coming: 2 seconds by default. A lone rating goes at
    /// once.
    pub batch_wait: Duration,
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
            batch_jobs: 2_000,
            batch_wait: Duration::from_secs(2),
        }
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

impl<S: JobQueue + LeadWebhooks + Clone> Worker<S> {
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
            let looked = self.run_once_within(self.config.batch_wait).await;
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

    /// Processes the jobs due now (up to [`WorkerConfig::batch_jobs`], their events
    /// batched), then posts the lead webhook event due soonest, then syncs the due events
    /// of a CRM sync; `false` when none was due. A failure of one does not keep the others
    /// from running; the first failure is returned.
    pub async fn run_once(&self) -> StoreResult<bool> {
        self.run_once_within(Duration::ZERO).await
    }

    async fn run_once_within(&self, batch_wait: Duration) -> StoreResult<bool> {
        let jobs = self.run_jobs(batch_wait).await;
        let event = self.run_webhook_event().await;
        let sync = self.run_sync().await;
        Ok(jobs? | event? | sync?)
    }

    fn lease(&self) -> StoreResult<chrono::Duration> {
        chrono::Duration::from_std(self.config.lease)
            .map_err(|_| StoreError::Invalid("the lease is too long".to_owned()))
    }

    /// Claims the jobs due now (up to [`WorkerConfig::batch_jobs`]) and processes them
    /// together; `false` when none is due.
    pub async fn run_job(&self) -> StoreResult<bool> {
        self.run_jobs(Duration::ZERO).await
    }

    async fn run_jobs(&self, batch_wait: Duration) -> StoreResult<bool> {
        let jobs = self.claim_jobs(batch_wait).await?;
        if jobs.is_empty() {
            return Ok(false);
        }
        self.process(&jobs).await.map(|()| true)
    }

    /// Claims due jobs until [`WorkerConfig::batch_jobs`], or until they hold
    /// [`ALONE_PER_BATCH`] deliveries that go alone. When several were due, waits up to
    /// `batch_wait` from the first claim for more to join them, as long as more come at
    /// most [`BATCH_PAUSE`] apart.
    async fn claim_jobs(&self, batch_wait: Duration) -> StoreResult<Vec<ClaimedJob>> {
        let started = Instant::now();
        let lease = self.lease()?;
        let mut jobs = Vec::new();
        let mut alone = 0;
        loop {
            let before = jobs.len();
            while jobs.len() < self.config.batch_jobs.max(1) && alone < ALONE_PER_BATCH {
                match self.store.claim_job(Utc::now(), lease).await {
                    Ok(Some(job)) => {
                        alone += alone_deliveries(&job);
                        jobs.push(job);
                    }
                    Ok(None) => break,
                    // The jobs claimed already are sent; the next look tries again.
                    Err(err) if !jobs.is_empty() => {
                        tracing::error!(error = %err, "could not claim more jobs");
                        return Ok(jobs);
                    }
                    Err(err) => return Err(err),
                }
            }
            let waited = started.elapsed();
            let came = jobs.len() > before;
            let full = jobs.len() >= self.config.batch_jobs || alone >= ALONE_PER_BATCH;
            if jobs.len() < 2 || full || !came {
                return Ok(jobs);
            }
            let Some(left) = batch_wait.checked_sub(waited).filter(|d| !d.is_zero()) else {
                return Ok(jobs);
            };
            let pause = left.min(BATCH_PAUSE);
            if !self.store.wait_for_work(pause).await {
                tokio::time::sleep(pause).await;
            }
        }
    }

    /// Claims the lead webhook event due soonest of a webhook that posts, posts it and
    /// records the attempt; `false` when none is due.
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
        let took = ("lead_webhook", started.elapsed());
        self.record_event(&claimed, outcome, took).await?;
        Ok(true)
    }

    /// Claims the due events of a CRM sync that no worker holds (a sync's events go to one
    /// worker at a time, so a person's reach the CRM in order) and syncs them: HubSpot's in
    /// batch calls, Pipedrive's one after the other. Records each attempt; `false` when no
    /// sync had events due.
    pub async fn run_sync(&self) -> StoreResult<bool> {
        let lease = self.lease()?;
        let claimed = self.store.claim_sync_events(Utc::now(), lease).await?;
        let Some(kind) = claimed.first().map(|first| first.webhook.kind) else {
            return Ok(false);
        };
        let started = Instant::now();
        let mut events = Vec::with_capacity(claimed.len());
        for claimed in claimed {
            match lead_event(&claimed) {
                Ok(body) => events.push((claimed, body)),
                Err(outcome) => {
                    let took = (CRM, started.elapsed());
                    self.record_event(&claimed, outcome, took).await?;
                }
            }
        }
        if kind == WebhookKind::Hubspot {
            let outcomes = hubspot::sync(&self.store, &self.deliverer, &events).await?;
            let took = ("hubspot", started.elapsed());
            for ((claimed, _), outcome) in events.iter().zip(outcomes) {
                self.record_event(claimed, outcome, took).await?;
            }
            return Ok(true);
        }
        // Pipedrive's events, in order, while half the lease remains: one never outlives
        // its lease, when another worker could take the sync.
        let http = &self.deliverer.http;
        for (claimed, event) in &events {
            let at = Instant::now();
            let outcome = match at.duration_since(started) < self.config.lease / 2 {
                true => pipedrive::sync(&self.store, http, claimed, event).await?,
                false => Outcome::Retry {
                    status: None,
                    error: "not reached before the claim's time ran out".to_owned(),
                    retry_after: Some(Duration::ZERO),
                },
            };
            self.record_event(claimed, outcome, ("pipedrive", at.elapsed()))
                .await?;
        }
        Ok(true)
    }

    /// Records an attempt at `claimed` that ended as `outcome`, at `destination` (its name
    /// in the metrics) after `took`; a REST hook whose target is gone is removed. A lease
    /// lost or a webhook removed meanwhile is not a failure.
    async fn record_event(
        &self,
        claimed: &ClaimedWebhookEvent,
        outcome: Outcome,
        (destination, took): (&'static str, Duration),
    ) -> StoreResult<()> {
        let attempts = claimed.attempts + 1;
        let attempt = self.settle(attempts, claimed.occurred_at, outcome);
        record_delivery(destination, attempt.outcome, took);
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
        let rest_hook = claimed.webhook.kind == WebhookKind::RestHook;
        if recorded.is_ok() && rest_hook && attempt.http_status == Some(410) {
            self.unsubscribe(&claimed.webhook).await?;
        }
        match recorded {
            Ok(()) => Ok(()),
            Err(StoreError::Conflict(Conflict::WebhookLeaseLost(id))) => {
                tracing::warn!(delivery = id, "lease lost; another worker has the event");
                Ok(())
            }
            Err(StoreError::NotFound(Entity::Webhook)) => {
                tracing::info!(delivery = claimed.id, "the webhook was removed meanwhile");
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    /// Removes a REST hook whose target answered `410 Gone`: the subscriber has gone
    /// (<https://resthooks.org/docs/retries/>: "a 410 ... should immediately remove the
    /// subscription"), and its events not yet posted go with it.
    async fn unsubscribe(&self, hook: &Webhook) -> StoreResult<()> {
        self.store.remove_webhook(hook.project_id, hook.id).await?;
        tracing::info!(webhook = %hook.id, "REST hook removed: its target answered 410 Gone");
        Ok(())
    }

    /// Delivers the due deliveries of `jobs` concurrently (batched per destination, the
    /// others alone), records each attempt as its platform answers, then finishes each job
    /// or puts it back until its next retry. A job whose lease was lost is left to the
    /// worker that has it; another store failure is returned once the others are done.
    async fn process(&self, jobs: &[ClaimedJob]) -> StoreResult<()> {
        let now = Utc::now();
        let (mut next_due, planned) = self.plan(jobs, now);
        let mut in_flight = self.send(jobs, planned, now);
        let mut dropped = vec![false; jobs.len()];
        let mut first_error = None;
        // Each attempt is recorded as soon as its platform answers, so a worker that dies
        // midway resends only what it had not recorded.
        while let Some(sent) = in_flight.next().await {
            for sent in sent {
                let index = sent.job;
                if dropped[index] {
                    continue;
                }
                match self.record(&jobs[index], sent).await {
                    Ok(retry_at) => next_due[index] = sooner(next_due[index], retry_at),
                    Err(err) => {
                        dropped[index] = true;
                        first_error = first_error.or(unexpected(err));
                    }
                }
            }
        }
        self.keep_rotated_refresh_tokens(jobs).await;
        for ((claimed, next_due), dropped) in jobs.iter().zip(next_due).zip(dropped) {
            if dropped {
                continue;
            }
            if let Err(err) = self.settle_job(claimed, next_due).await {
                first_error = first_error.or(unexpected(err));
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// How each pending delivery of `jobs` goes out now (or when the first that waits is
    /// due, per job).
    fn plan<'a>(
        &self,
        jobs: &'a [ClaimedJob],
        now: DateTime<Utc>,
    ) -> (Vec<Option<DateTime<Utc>>>, Planned<'a>) {
        let mut next_due = vec![None; jobs.len()];
        let mut planned = Planned::default();
        for (index, claimed) in jobs.iter().enumerate() {
            let pending = claimed
                .deliveries
                .iter()
                .filter(|d| d.state == DeliveryState::Pending);
            for delivery in pending {
                if let Some(at) = delivery.next_attempt_at.filter(|at| *at > now) {
                    next_due[index] = sooner(next_due[index], Some(at));
                    continue;
                }
                match self.deliverer.plan(delivery, claimed, now) {
                    Plan::Ended(outcome) => planned.ended.push(Sent {
                        job: index,
                        delivery,
                        outcome,
                        batch: None,
                        took: Duration::ZERO,
                    }),
                    Plan::Alone => planned.alone.push((index, delivery)),
                    Plan::Batched { destination, event } => {
                        let key = (claimed.project.id, delivery.integration, destination);
                        let group = planned.groups.entry(key).or_default();
                        group.push(((index, delivery), event));
                    }
                }
            }
        }
        (next_due, planned)
    }

    /// Starts every request of `planned` at once: each ends in the [`Sent`] of the
    /// deliveries it carried.
    fn send<'a>(
        &'a self,
        jobs: &'a [ClaimedJob],
        planned: Planned<'a>,
        now: DateTime<Utc>,
    ) -> BoxStream<'a, Vec<Sent<'a>>> {
        let in_flight = FuturesUnordered::<BoxFuture<'a, Vec<Sent<'a>>>>::new();
        let ended = planned.ended;
        in_flight.push(async move { ended }.boxed());
        // Requests that go alone, a few at a time, as many as a job used to send at once.
        let alone = stream::iter(planned.alone)
            .map(move |(job, delivery)| async move {
                let started = Instant::now();
                let outcome = self.deliverer.deliver(delivery, &jobs[job], now).await;
                let (batch, took) = (None, started.elapsed());
                vec![Sent {
                    job,
                    delivery,
                    outcome,
                    batch,
                    took,
                }]
            })
            .buffer_unordered(ALONE_AT_ONCE);
        for ((_, kind, destination), events) in planned.groups {
            in_flight.push(
                async move {
                    let to = (kind, destination.as_str());
                    send_group(&self.deliverer, jobs, to, events).await
                }
                .boxed(),
            );
        }
        stream::select(in_flight, alone).boxed()
    }

    /// Records how a delivery went; when it is to be tried again.
    async fn record(
        &self,
        claimed: &ClaimedJob,
        sent: Sent<'_>,
    ) -> StoreResult<Option<DateTime<Utc>>> {
        let job = &claimed.job;
        let delivery = sent.delivery;
        let attempts = delivery.attempts + 1;
        let mut attempt = self.attempt(delivery.integration, attempts, claimed, sent.outcome);
        attempt.batch = sent.batch;
        record_delivery(delivery.integration.into(), attempt.outcome, sent.took);
        tracing::info!(
            job = job.id.0,
            lead = job.lead_id.0,
            integration = %delivery.integration,
            attempt = attempts,
            outcome = attempt.outcome.as_ref(),
            http_status = attempt.http_status,
            error = attempt.error.as_deref().unwrap_or(""),
            batch = attempt.batch.map(|b| b.size).unwrap_or(0),
            "delivery attempt"
        );
        self.store
            .record_attempt(job.id, claimed.lease.token, &attempt)
            .await?;
        Ok(attempt.retry_at)
    }

    /// Puts a job back until `next_due`, or finishes it when nothing is left to try.
    async fn settle_job(
        &self,
        claimed: &ClaimedJob,
        next_due: Option<DateTime<Utc>>,
    ) -> StoreResult<()> {
        let (job, token) = (&claimed.job, claimed.lease.token);
        match next_due {
            Some(at) => self.store.reschedule_job(job.id, token, at).await,
            None => {
                let status = self.store.finish_job(job.id, token, Utc::now()).await?;
                tracing::info!(job = job.id.0, lead = job.lead_id.0, status = %status, "job done");
                Ok(())
            }
        }
    }

    /// Keeps the refresh tokens platforms rotated while delivering `jobs`: one look per
    /// project and integration.
    async fn keep_rotated_refresh_tokens(&self, jobs: &[ClaimedJob]) {
        let mut seen = BTreeSet::new();
        for claimed in jobs {
            for delivery in &claimed.deliveries {
                if seen.insert((claimed.project.id, delivery.integration)) {
                    self.keep_rotated_refresh_token(claimed, delivery.integration)
                        .await;
                }
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

    /// The attempt to record for an outcome (sent alone); a retry beyond the policy fails
    /// for good.
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

/// The metrics' name of a CRM event that never reached its CRM.
const CRM: &str = "crm";

/// The lead event a CRM sync's delivery carries, or the failure of one that carries none.
fn lead_event(claimed: &ClaimedWebhookEvent) -> Result<WebhookBody, Outcome> {
    serde_json::from_str(&claimed.body).map_err(|_| Outcome::Failed {
        status: None,
        error: "the event's body is not a lead event".to_owned(),
    })
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

/// How long a batch that may grow waits for the next rating: a burst of ratings (an import,
/// a script rating a month of leads) comes closer together than this; a person rating
/// leads one by one does not, and waits for nothing.
const BATCH_PAUSE: Duration = Duration::from_millis(200);

/// How many deliveries that go alone (GA4, webhooks, Microsoft Advertising's adjustments)
/// a loop sends at once.
const ALONE_AT_ONCE: usize = 4;

/// How many deliveries that go alone a loop's jobs may hold before it claims no more: a few
/// rounds of [`ALONE_AT_ONCE`], so that its jobs end well within their lease however many
/// batched events they carry.
const ALONE_PER_BATCH: usize = 4 * ALONE_AT_ONCE;

/// How many of a claimed job's pending deliveries go alone.
fn alone_deliveries(claimed: &ClaimedJob) -> usize {
    claimed
        .deliveries
        .iter()
        .filter(|d| d.state == DeliveryState::Pending && goes_alone(d))
        .count()
}

/// The deliveries of claimed jobs, by how they go out.
#[derive(Default)]
struct Planned<'a> {
    /// Ended before any request: skips.
    ended: Vec<Sent<'a>>,
    /// Each in a request of its own.
    alone: Vec<Due<'a>>,
    /// Batched, by destination.
    groups: Groups<'a>,
}

/// The sooner of two times, either of which may be missing.
fn sooner(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A store failure worth returning: not a lost lease, which only means another worker has
/// the job now.
fn unexpected(err: StoreError) -> Option<StoreError> {
    match err {
        StoreError::Conflict(Conflict::LeaseLost(job)) => {
            tracing::warn!(job = job.0, "lease lost; another worker has the job");
            None
        }
        err => Some(err),
    }
}
