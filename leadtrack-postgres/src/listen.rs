//! Waking workers when work is queued. A store that queued a job or a webhook event tells
//! the workers once its transaction has committed: it `NOTIFY`s the channel [`CHANNEL`],
//! and a worker's store `LISTEN`s on a connection of its own, so that a delivery starts at
//! once on whichever worker process is idle, instead of at its next poll.
//!
//! A process gathers its notifications for a few milliseconds and sends them as one, in a
//! statement of its own: PostgreSQL commits the transactions that notify one at a time, so
//! a `NOTIFY` inside every rating would make the ratings wait for each other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::Pool;
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, NoTls};

/// The notification channel.
const CHANNEL: &str = "leadtrack_work";

/// How long a process gathers the work it queued into one notification.
const GATHER: Duration = Duration::from_millis(10);

/// Notifies the workers of work this process queued, and, once a worker waits, listens for
/// the notifications of every process on a connection of its own (reconnecting after a
/// failure) until the store closes.
pub(crate) struct Listener {
    config: tokio_postgres::Config,
    heard: Arc<Notify>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// The store's pool, which notifications are sent from.
    pool: Pool,
    /// Whether a notification is gathering work to announce.
    gathering: Arc<AtomicBool>,
}

impl Listener {
    /// A listener that connects with `config` once it is first waited on, and notifies
    /// through `pool`.
    pub(crate) fn new(config: tokio_postgres::Config, pool: Pool) -> Self {
        Self {
            config,
            heard: Arc::new(Notify::new()),
            task: Mutex::new(None),
            pool,
            gathering: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Tells the workers, within [`GATHER`], that work was queued by a transaction that has
    /// committed. A notification that fails is not sent again: the workers' poll finds the
    /// work a moment later.
    pub(crate) fn queued(&self) {
        if self.gathering.swap(true, Ordering::AcqRel) {
            return;
        }
        let (pool, gathering) = (self.pool.clone(), Arc::clone(&self.gathering));
        tokio::spawn(async move {
            tokio::time::sleep(GATHER).await;
            // Work queued from now on needs a notification after this one.
            gathering.store(false, Ordering::Release);
            let sent = match pool.get().await {
                Ok(client) => client
                    .batch_execute(&format!("NOTIFY {CHANNEL}"))
                    .await
                    .map_err(|err| err.to_string()),
                Err(err) => Err(err.to_string()),
            };
            if let Err(err) = sent {
                tracing::debug!(error = %err, "could not notify the workers");
            }
        });
    }

    /// Waits for a notification, or for `at_most`.
    pub(crate) async fn wait(&self, at_most: Duration) {
        let heard = self.heard.notified();
        self.start();
        let _ = tokio::time::timeout(at_most, heard).await;
    }

    /// Starts the listening task, unless it runs.
    fn start(&self) {
        let mut task = self
            .task
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if task.is_none() {
            let (config, heard) = (self.config.clone(), Arc::clone(&self.heard));
            *task = Some(tokio::spawn(listen(config, heard)));
        }
    }

    /// Stops listening.
    pub(crate) fn stop(&self) {
        let task = self
            .task
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(task) = task {
            task.abort();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Listens until the task is stopped, reconnecting a second after a failure. Every
/// (re)connection wakes the waiters too: a notification may have been missed meanwhile.
async fn listen(config: tokio_postgres::Config, heard: Arc<Notify>) {
    loop {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let forward = Arc::clone(&heard);
                let driver = tokio::spawn(async move {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(Ok(message)) = messages.next().await {
                        if let AsyncMessage::Notification(_) = message {
                            forward.notify_waiters();
                        }
                    }
                });
                match client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
                    Ok(()) => {
                        heard.notify_waiters();
                        // Until the connection ends; `client` lives as long, keeping it open.
                        let _ = driver.await;
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "cannot listen for queued work");
                        driver.abort();
                    }
                }
                drop(client);
            }
            Err(err) => tracing::warn!(error = %err, "cannot connect to listen for queued work"),
        }
        heard.notify_waiters();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
