//! The due deliveries of many claimed jobs, grouped by destination and sent in batches: one
//! request per batch, up to the platform's batch size, and a request the platform refused
//! whole (one bad event makes Meta, the Data Manager API or TikTok refuse them all) halved until
//! each bad event is alone, so that the good ones are delivered and each bad one fails in
//! the platform's words. `k` bad events among `n` cost about `2k·log2(n)` more requests.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use leadtrack_core::integration::Integrations;
use leadtrack_core::job::{Batch, ClaimedJob, Delivery};
use leadtrack_core::types::{IntegrationKind, ProjectId};
use leadtrack_platforms::Outcome;
use serde_json::Value;
use uuid::Uuid;

use crate::answer::Answered;
use crate::deliverer::{Deliverer, batch_size, refused_for_an_event};

/// A due delivery of one of the claimed jobs (by its index).
pub(crate) type Due<'a> = (usize, &'a Delivery);

/// How one delivery went: its job's index, the delivery, the outcome, the request it went
/// in (when batched), and how long the platform took to answer.
pub(crate) struct Sent<'a> {
    pub(crate) job: usize,
    pub(crate) delivery: &'a Delivery,
    pub(crate) outcome: Outcome,
    pub(crate) batch: Option<Batch>,
    pub(crate) took: Duration,
}

/// Events waiting for one destination: the project's integration of a kind, and where
/// within it (Google Ads' conversion action).
pub(crate) type Groups<'a> = BTreeMap<(ProjectId, IntegrationKind, String), Vec<(Due<'a>, Value)>>;

/// Sends one destination's events in batches of the platform's size, one after the
/// other (their requests share a quota): one [`Sent`] per event.
pub(crate) async fn send_group<'a>(
    deliverer: &Deliverer,
    jobs: &'a [ClaimedJob],
    (kind, destination): (IntegrationKind, &str),
    events: Vec<(Due<'a>, Value)>,
) -> Vec<Sent<'a>> {
    let Some(((first, _), _)) = events.first() else {
        return Vec::new();
    };
    let integrations = &jobs[*first].integrations;
    let (due, events): (Vec<Due<'a>>, Vec<Value>) = events.into_iter().unzip();
    let mut sent = Vec::with_capacity(due.len());
    for (due, events) in due
        .chunks(batch_size(kind))
        .zip(events.chunks(batch_size(kind)))
    {
        let started = Instant::now();
        let outcomes = split(deliverer, (kind, integrations, destination), events).await;
        let took = started.elapsed();
        sent.extend(
            due.iter()
                .zip(outcomes)
                .map(|(&(job, delivery), (outcome, batch))| Sent {
                    job,
                    delivery,
                    outcome,
                    batch,
                    took,
                }),
        );
    }
    sent
}

/// Sends `events` in one request; when the platform refused it whole, maybe for a bad
/// event ([`refused_for_an_event`]), sends each half again. One outcome per event, with the request it went in
/// (none when it was held back unsent).
fn split<'a>(
    deliverer: &'a Deliverer,
    to: (IntegrationKind, &'a Integrations, &'a str),
    events: &'a [Value],
) -> BoxFuture<'a, Vec<(Outcome, Option<Batch>)>> {
    async move {
        let (kind, integrations, destination) = to;
        let batch = Some(Batch {
            id: Uuid::new_v4(),
            size: u32::try_from(events.len()).unwrap_or(u32::MAX),
        });
        match deliverer
            .send(kind, integrations, destination, events)
            .await
        {
            Answered::All(refused) if events.len() > 1 && refused_for_an_event(kind, &refused) => {
                let (left, right) = events.split_at(events.len() / 2);
                let mut outcomes = split(deliverer, to, left).await;
                outcomes.extend(split(deliverer, to, right).await);
                outcomes
            }
            Answered::All(outcome) => vec![(outcome, batch); events.len()],
            Answered::Held(outcome) => vec![(outcome, None); events.len()],
            Answered::Each(outcomes) if outcomes.len() == events.len() => outcomes
                .into_iter()
                .map(|outcome| (outcome, batch))
                .collect(),
            Answered::Each(outcomes) => {
                let error = format!(
                    "{kind} answered for {} events of the {} sent",
                    outcomes.len(),
                    events.len()
                );
                let failed = Outcome::Failed {
                    status: None,
                    error,
                };
                vec![(failed, batch); events.len()]
            }
        }
    }
    .boxed()
}
