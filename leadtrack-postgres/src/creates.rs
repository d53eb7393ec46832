//! Concurrent creates written together: each create is handed to a task that gathers the
//! creates waiting at that moment into one transaction, where they run side by side on one
//! connection.
//!
//! A create is a dozen short statements (the lookups, the insert, its steps), each waiting
//! on the one before. Alone, each statement is a round trip and a wake-up of a PostgreSQL
//! backend, and each create a `BEGIN` and a `COMMIT` of its own. Run side by side, the
//! creates' statements go to PostgreSQL together (`tokio-postgres` pipelines the requests
//! of futures polled at once), and the group commits once: 1.5 to 1.8 times the creates a
//! second at 64 connections on two cores (docs/performance.md).
//!
//! Each create runs the flow it runs alone ([`leads::create`]). Within one transaction row
//! locks no longer order two creates, so what a create reads and then writes is ordered
//! otherwise: creates that may merge into one lead (one project, one event id) run one
//! after another ([`chains`]), and the round-robin's turn moves only from the turn read
//! ([`assignment::in_turn`]). Nor do locks keep their order: a group gives up a lock it
//! waits for over a tenth of a second ([`WAIT_FOR_LOCKS`]), so that two groups never wait
//! on each other for long.
//!
//! When any create of a group fails (or gives up a lock), nothing of the group is written,
//! and each of its creates runs again alone, in a transaction of its own, so that one bad
//! create fails alone. A transaction PostgreSQL aborts for a deadlock or a serialisation
//! failure runs again, as every transaction of this store does.
//!
//! [`assignment::in_turn`]: crate::assignment::in_turn
//!
//! Groups form without waiting: the task takes whatever waits when a group may start. At
//! most [`GROUPS`] run at once, and a quarter of the pool's connections, so that reads
//! keep the rest.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use futures_util::future::join_all;
use leadtrack_core::StoreError;
use leadtrack_core::lead::CreatedLead;
use leadtrack_core::request::CreateRoute;
use leadtrack_core::spam::SpamReason;
use leadtrack_core::store::LeadRow;
use leadtrack_core::types::ProjectId;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::{Error, leads, transaction};

/// The most groups written at once: each holds one of the pool's connections, and they
/// take at most a quarter of the pool.
const GROUPS: usize = 4;

/// The most creates in one group.
const LARGEST: usize = 32;

/// How long a group waits for a lock before it gives up, and its creates run alone.
///
/// A group holds the locks of all its creates (the leads they merge into, the event ids
/// they insert, the originals they mark as duplicated, the round-robin's turns), taken in
/// no order, so two groups can wait on each other; PostgreSQL ends such a deadlock only
/// after `deadlock_timeout` (a second by default, which only a superuser may shorten). A
/// group waits a tenth of that at most; its creates then wait alone, as before groups.
const WAIT_FOR_LOCKS: &str = "SET LOCAL lock_timeout = '100ms'";

/// What a create answers: the lead, and whether it queued a webhook event.
type Created = Result<(CreatedLead, bool), StoreError>;

/// A create waiting to be written.
struct Pending {
    /// The project the lead arrives in.
    project: ProjectId,
    /// The route it arrived by, and why it is spam if it is.
    arrival: (CreateRoute, Option<SpamReason>),
    /// The lead's row.
    row: LeadRow,
    /// When it arrived.
    now: DateTime<Utc>,
    /// Where its answer goes.
    reply: oneshot::Sender<Created>,
}

/// The hand-off to the task that writes creates in groups.
pub(crate) struct Creates {
    sender: mpsc::UnboundedSender<Pending>,
}

impl Creates {
    /// Starts the task that writes creates on `pool`.
    pub(crate) fn start(pool: Pool) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let groups = (pool.status().max_size / 4).clamp(1, GROUPS);
        tokio::spawn(gather(Pooled(pool), groups, receiver));
        Self { sender }
    }

    /// Creates a lead in `project` from `row`, arriving by `arrival` at `now`, in a group
    /// with the creates waiting beside it ([`leads::create`]); with whether it queued a
    /// webhook event.
    pub(crate) async fn create(
        &self,
        project: ProjectId,
        arrival: (CreateRoute, Option<SpamReason>),
        row: LeadRow,
        now: DateTime<Utc>,
    ) -> Created {
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            project,
            arrival,
            row,
            now,
            reply,
        };
        self.sender.send(pending).map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }
}

/// The answer to a create the writing task dropped: it only ends with the store.
fn closed() -> StoreError {
    StoreError::Unavailable("the store is closed".to_owned())
}

/// The pool, as [`transaction!`] takes it.
struct Pooled(Pool);

impl Pooled {
    /// A connection from the pool.
    async fn client(&self) -> Result<deadpool_postgres::Object, Error> {
        self.0.get().await.map_err(Error::from)
    }
}

/// Takes the creates waiting whenever one of `groups` may start, and writes each group on
/// a task of its own; ends when the store (the sender) is gone.
async fn gather(pool: Pooled, groups: usize, mut receiver: mpsc::UnboundedReceiver<Pending>) {
    let pool = Arc::new(pool);
    let groups = Arc::new(Semaphore::new(groups));
    loop {
        // The permit first: while every group is busy, the next one grows.
        let Ok(permit) = Arc::clone(&groups).acquire_owned().await else {
            return;
        };
        let Some(first) = receiver.recv().await else {
            return;
        };
        let mut group = vec![first];
        while group.len() < LARGEST {
            match receiver.try_recv() {
                Ok(pending) => group.push(pending),
                Err(_) => break,
            }
        }
        let pool = Arc::clone(&pool);
        tokio::spawn(async move {
            write(&pool, group).await;
            drop(permit);
        });
    }
}

/// Writes `group` in one transaction, or, when that fails, each create alone; answers each.
async fn write(pool: &Pooled, group: Vec<Pending>) {
    if let Some(created) = together(pool, &group).await {
        for (pending, created) in group.into_iter().zip(created) {
            // A create whose caller is gone is written all the same.
            let _ = pending.reply.send(Ok(created));
        }
        return;
    }
    join_all(group.into_iter().map(|pending| async move {
        let created = alone(pool, &pending).await;
        let _ = pending.reply.send(created);
    }))
    .await;
}

/// Runs the creates of `group` side by side in one transaction, those of each of its
/// [`chains`] one after another; `None` when any failed (and so nothing was written). A
/// group of one is written alone instead.
async fn together(pool: &Pooled, group: &[Pending]) -> Option<Vec<(CreatedLead, bool)>> {
    if group.len() < 2 {
        return None;
    }
    let chains = chains(group);
    let written = transaction!(pool, |tx| {
        let tx = &tx;
        tx.batch_execute(WAIT_FOR_LOCKS).await?;
        let ran = join_all(chains.iter().map(|chain| async move {
            let mut ran = Vec::with_capacity(chain.len());
            for &i in chain {
                let p = &group[i];
                ran.push((
                    i,
                    leads::create(tx, p.project, p.arrival, &p.row, p.now).await,
                ));
            }
            ran
        }))
        .await;
        let mut results: Vec<_> = ran.into_iter().flatten().collect();
        results.sort_unstable_by_key(|(i, _)| *i);
        all_or_failure(results.into_iter().map(|(_, result)| result))?
    });
    if written.is_err() {
        // Nothing of the error: PostgreSQL's message may quote a lead's values.
        tracing::debug!(
            size = group.len(),
            "a group of creates failed; each runs alone"
        );
    }
    written.ok()
}

/// The creates of `group` (by their place in it) in chains run one create after another:
/// creates in one project with one event id may merge into one lead, and a merge reads the
/// lead, then writes it, which a row lock orders between transactions but not within one.
/// Every other create is a chain of its own.
fn chains(group: &[Pending]) -> Vec<Vec<usize>> {
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let mut by_event: HashMap<(i64, &str), usize> = HashMap::new();
    for (i, pending) in group.iter().enumerate() {
        let Some(event) = pending.row.data.unique_event_id() else {
            chains.push(vec![i]);
            continue;
        };
        match by_event.entry((pending.project.0, event)) {
            Entry::Occupied(chain) => chains[*chain.get()].push(i),
            Entry::Vacant(slot) => {
                slot.insert(chains.len());
                chains.push(vec![i]);
            }
        }
    }
    chains
}

/// Every create's outcome, or the failure that should decide whether the group runs again:
/// a deadlock or serialisation failure if any create met one (the others then only saw an
/// aborted transaction), else the first.
fn all_or_failure<T>(results: impl Iterator<Item = Result<T, Error>>) -> Result<Vec<T>, Error> {
    let mut created = Vec::new();
    let mut failure: Option<Error> = None;
    for result in results {
        match result {
            Ok(value) => created.push(value),
            Err(err) if err.is_retryable() => failure = Some(err),
            Err(err) => {
                failure.get_or_insert(err);
            }
        }
    }
    match failure {
        Some(err) => Err(err),
        None => Ok(created),
    }
}

/// Writes one create in a transaction of its own.
async fn alone(pool: &Pooled, pending: &Pending) -> Created {
    transaction!(pool, |tx| leads::create(
        &tx,
        pending.project,
        pending.arrival,
        &pending.row,
        pending.now
    )
    .await?)
}
