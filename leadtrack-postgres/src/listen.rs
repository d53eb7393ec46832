//! Waking workers when work is queued: the transactions that queue a job or a webhook
//! event `NOTIFY` the channel [`CHANNEL`] (delivered when they commit), and a worker's store
//! `LISTEN`s on a connection of its own, so that a delivery starts at once on whichever
//! worker process is idle, instead of at its next poll.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::GenericClient;
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::Error;

/// The notification channel.
const CHANNEL: &str = "leadtrack_work";

/// Tells the listening workers that work was queued, when the transaction commits.
pub(crate) async fn notify(c: &impl GenericClient) -> Result<(), Error> {
    c.batch_execute(&format!("NOTIFY {CHANNEL}")).await?;
    Ok(())
}

/// A connection listening on [`CHANNEL`], started by the first wait, kept (reconnecting
/// after a failure) until the store closes.
pub(crate) struct Listener {
    config: tokio_postgres::Config,
    heard: Arc<Notify>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Listener {
    /// A listener that connects with `config` once it is first waited on.
    pub(crate) fn new(config: tokio_postgres::Config) -> Self {
        Self {
            config,
            heard: Arc::new(Notify::new()),
            task: Mutex::new(None),
        }
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
