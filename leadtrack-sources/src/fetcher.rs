//! The fetcher: reads each lead a platform announced from the platform, and keeps it.
//!
//! Announcements wait in the store's queue ([`JobQueue::claim_lead_fetch`]), so a lead is
//! never lost while Meta or the network is down: a fetch that fails is tried again later
//! ([`fetch_retry_at`]), for as long as it takes, and a fetcher that dies leaves its
//! lease to lapse for another.

use std::future::Future;

use chrono::{DateTime, Duration, Utc};
use leadtrack_core::api::LeadIdentifier;
use leadtrack_core::integration::DEFAULT_META_API_VERSION;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::source::{
    ClaimedLeadFetch, FIRST_FETCH_RETRY, FetchOutcome, LeadSource, SourceKind, fetch_retry_at,
    linkedin_form_id, linkedin_lead, linkedin_submitted_at, meta_created_time, meta_lead,
};
use leadtrack_core::target::Targets;
use leadtrack_core::types::{LeadId, ProjectId};
use leadtrack_core::{Admin, JobQueue, LeadStore, StoreError};
use leadtrack_outbound::{Outbound, failure};
use leadtrack_platforms::{linkedin, meta};

use crate::linkedin as linkedin_sync;
use serde_json::Value;

/// Meta's Graph API.
const META_GRAPH: &str = "https://graph.facebook.com";

/// The fields of a lead the fetcher reads
/// (<https://developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving/>).
const LEAD_FIELDS: &str = "field_data,form_id,ad_id,campaign_id,created_time";

/// How the fetcher runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetcherConfig {
    /// How long it waits when nothing is due.
    pub poll_interval: std::time::Duration,
    /// How long a claimed fetch is its own before another fetcher may take it.
    pub lease: Duration,
    /// The wait after a first failure; it doubles with each, up to an hour.
    pub first_retry: Duration,
    /// How often LinkedIn's Lead Gen Forms are synced.
    pub sync_every: std::time::Duration,
    /// The addresses the fetcher may call: the operator's exceptions to core's rule.
    pub targets: Targets,
}

/// How far back a fetcher's first LinkedIn sync looks (LinkedIn keeps responses up to a
/// year; a quarter brings in the recent past without a year's listing at each start).
const FIRST_SYNC: Duration = Duration::days(90);

/// How far back the later syncs look: well past any sync missed while the server was
/// down for a while, and listed again harmlessly.
const LATER_SYNCS: Duration = Duration::days(2);

impl Default for FetcherConfig {
    /// Every second, two-minute leases, the first retry after 30 seconds, LinkedIn synced
    /// every five minutes.
    fn default() -> Self {
        Self {
            poll_interval: std::time::Duration::from_secs(1),
            lease: Duration::minutes(2),
            first_retry: FIRST_FETCH_RETRY,
            sync_every: std::time::Duration::from_secs(300),
            targets: Targets::default(),
        }
    }
}

/// Fetches the leads the sources announced, from `store`'s queue.
pub struct Fetcher<S> {
    store: S,
    http: Outbound,
    config: FetcherConfig,
}

/// Why a fetch did not keep its lead this time.
type Failed = String;

impl<S: LeadStore + Admin + JobQueue> Fetcher<S> {
    /// A fetcher of `store`'s queue.
    pub fn new(store: S, config: FetcherConfig) -> Self {
        let http = Outbound::new(config.targets.clone(), std::time::Duration::from_secs(20));
        Self {
            store,
            http,
            config,
        }
    }

    /// Fetches what is due until `stop` resolves; a fetch under way when it does is left
    /// to its lease.
    pub async fn run(self, stop: impl Future<Output = ()>) {
        let mut stop = std::pin::pin!(stop);
        let mut next_sync = tokio::time::Instant::now();
        let mut window = FIRST_SYNC;
        loop {
            if tokio::time::Instant::now() >= next_sync {
                let now = Utc::now();
                let queued = tokio::select! {
                    () = &mut stop => return,
                    queued = linkedin_sync::sync(&self.store, &self.http, now - window, now) => queued,
                };
                if queued > 0 {
                    tracing::info!(queued, "new LinkedIn lead form responses queued");
                }
                (next_sync, window) = (
                    tokio::time::Instant::now() + self.config.sync_every,
                    LATER_SYNCS,
                );
            }
            let worked = tokio::select! {
                () = &mut stop => return,
                worked = self.step() => worked,
            };
            if !worked {
                tokio::select! {
                    () = &mut stop => return,
                    () = tokio::time::sleep(self.config.poll_interval) => {}
                }
            }
        }
    }

    /// Fetches the one fetch due soonest, if any; whether there was one.
    pub async fn step(&self) -> bool {
        let claimed = match self
            .store
            .claim_lead_fetch(Utc::now(), self.config.lease)
            .await
        {
            Ok(Some(claimed)) => claimed,
            Ok(None) => return false,
            Err(err) => {
                tracing::warn!(error = %err, "the lead fetch queue could not be read");
                return false;
            }
        };
        let outcome = match self.keep(&claimed).await {
            Ok(()) => FetchOutcome::Fetched,
            Err(error) => {
                tracing::warn!(fetch = claimed.id, attempts = claimed.attempts + 1, %error, "a lead could not be fetched; it is tried again later");
                let first = self.config.first_retry;
                let at = fetch_retry_at(Utc::now(), claimed.attempts, first);
                FetchOutcome::Retry { at, error }
            }
        };
        let finished = self
            .store
            .finish_lead_fetch(claimed.id, claimed.lease, &outcome, Utc::now())
            .await;
        if let Err(err) = finished {
            tracing::warn!(fetch = claimed.id, error = %err, "a lead fetch could not be ended; its lease will lapse");
        }
        true
    }

    /// Fetches the claimed lead and keeps it in its project.
    async fn keep(&self, claimed: &ClaimedLeadFetch) -> Result<(), Failed> {
        let kind = claimed.fetch.kind;
        let (body, at) = match kind {
            SourceKind::MetaLeadAds => self.read_meta(claimed).await?,
            SourceKind::LinkedinLeadGen => self.read_linkedin(claimed).await?,
            SourceKind::GoogleLeadForms => {
                return Err("Google posts its leads whole: there is nothing to fetch".to_owned());
            }
        };
        let body = body.as_object().cloned().unwrap_or_default();
        let lead = NewLead::from_object(body, CreateRoute::Server)
            .map_err(|err| format!("the lead is not one leadtrack takes: {}", err.message))?;
        let created = self
            .store
            .create_lead_via(claimed.project, CreateRoute::Server, lead.data, at)
            .await
            .map_err(|err| err.to_string())?;
        tracing::info!(fetch = claimed.id, lead = %created.lead_id, created = created.created, source = %kind, "an announced lead kept");
        if created.created && kind == SourceKind::MetaLeadAds {
            self.initial_stage(claimed.project, created.lead_id).await;
        }
        Ok(())
    }

    /// A Meta lead, read from the Graph API with the page's token: its `createLead` body
    /// and when it was submitted.
    async fn read_meta(
        &self,
        claimed: &ClaimedLeadFetch,
    ) -> Result<(Value, DateTime<Utc>), Failed> {
        let source = self
            .store
            .lead_source(claimed.project, SourceKind::MetaLeadAds)
            .await
            .map_err(|err| err.to_string())?;
        let Some(LeadSource::MetaLeadAds {
            page_access_token,
            base_url,
            ..
        }) = source
        else {
            return Err("the project's page is no longer set up".to_owned());
        };
        let base = base_url
            .as_deref()
            .unwrap_or(META_GRAPH)
            .trim_end_matches('/');
        let token = page_access_token.expose();
        let lead_id = &claimed.fetch.external_id;
        let fetched = self.graph(base, token, lead_id, LEAD_FIELDS).await?;
        // The form's name is a nicety: a lead is kept without it.
        let form_name = match fetched["form_id"].as_str() {
            Some(form) => self.graph(base, token, form, "name").await.ok(),
            None => None,
        };
        let name = form_name.as_ref().and_then(|form| form["name"].as_str());
        let body = meta_lead(&fetched, name).ok_or("Meta's answer names no lead")?;
        Ok((body, meta_created_time(&fetched).unwrap_or_else(Utc::now)))
    }

    /// A LinkedIn lead form response, as the sync listed it, read with its form's
    /// questions (`leadForms/{id}`, with the LinkedIn integration's credentials).
    async fn read_linkedin(
        &self,
        claimed: &ClaimedLeadFetch,
    ) -> Result<(Value, DateTime<Utc>), Failed> {
        let integrations = self
            .store
            .integrations(claimed.project)
            .await
            .map_err(|err| err.to_string())?;
        let settings = integrations
            .linkedin
            .ok_or("LinkedIn is not connected to the project")?;
        let response = &claimed.fetch.announced;
        let form_id = linkedin_form_id(response).ok_or("the response names no form")?;
        let form = linkedin::read(&self.http, &settings, &format!("leadForms/{form_id}")).await?;
        let body = linkedin_lead(response, &form).ok_or("the response has no id")?;
        Ok((
            body,
            linkedin_submitted_at(response).unwrap_or_else(Utc::now),
        ))
    }

    /// Tells the project's Meta integration, if any, of the lead's first funnel stage: Meta
    /// asks conversion leads for every stage, the initial one included. Outside the job
    /// model, once: a failure is logged, and the lead stays as kept.
    async fn initial_stage(&self, project: ProjectId, lead: LeadId) {
        let sent = async {
            let integrations = self.store.integrations(project).await?;
            let Some(settings) = integrations.meta else {
                return Ok(None);
            };
            let projects = self.store.projects().await?;
            let Some(project) = projects.into_iter().find(|p| p.id == project) else {
                return Ok(None);
            };
            let stored = self
                .store
                .find_lead(project.id, &LeadIdentifier::LeadId(lead))
                .await?;
            let http = &self.http;
            Ok::<_, StoreError>(Some(
                meta::send_initial_stage(http, &settings, &project, &stored).await,
            ))
        };
        match sent.await {
            Ok(Some(Ok(()))) => {
                tracing::info!(%lead, "the lead's initial stage sent to Meta");
            }
            Ok(Some(Err(error))) => {
                tracing::warn!(%lead, %error, "the lead's initial stage could not be sent to Meta");
            }
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(%lead, error = %err, "the lead's initial stage could not be sent to Meta");
            }
        }
    }

    /// A Graph API object's `fields`, read with the page's token (in the `Authorization`
    /// header, so that it is in no URL).
    async fn graph(
        &self,
        base: &str,
        token: &str,
        id: &str,
        fields: &str,
    ) -> Result<Value, Failed> {
        let url = format!("{base}/{DEFAULT_META_API_VERSION}/{id}");
        let unreached = |why: String| format!("Meta could not be reached: {why}");
        let answer = self
            .http
            .get(&url)
            .map_err(|refusal| unreached(refusal.to_string()))?
            .query(&[("fields", fields)])
            .bearer_auth(token)
            .send()
            .await
            .map_err(|err| unreached(failure(err)))?;
        let status = answer.status();
        if !status.is_success() {
            return Err(format!("Meta answered HTTP {}", status.as_u16()));
        }
        answer
            .json()
            .await
            .map_err(|_| "Meta answered something else than JSON".to_owned())
    }
}
