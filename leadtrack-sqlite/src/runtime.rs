//! The threads that own the SQLite connections, so that no SQLite call ever runs on an
//! async runtime's thread.
//!
//! One writer thread owns the only write connection. Writes arrive over a channel; when
//! several are waiting, the writer runs them all in one `BEGIN IMMEDIATE` transaction, each
//! inside its own savepoint (a failing write rolls back alone), and acknowledges them only
//! after the `COMMIT`: with `synchronous=FULL` one fsync then makes a whole batch durable
//! (group commit). Readers are a small pool of threads, each with its own connection; in WAL
//! mode they never wait for the writer.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use leadtrack_core::StoreError;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use crate::schema;
use crate::{Error, SqliteOptions};

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 512;

/// Runs one write on the writer's connection (or, when no transaction could be started,
/// on nothing) and says whether it succeeded.
type WriteOp = Box<dyn FnOnce(Option<&Connection>) -> Applied + Send>;
/// Delivers a write's result once its batch is committed (or failed to commit).
type Completion = Box<dyn FnOnce(Result<(), CommitFailure>) + Send>;

/// Why a batch of writes was not committed; none of its writes happened.
#[derive(Clone, Debug)]
enum CommitFailure {
    /// The storage refused it (full, read-only, failing): retry later.
    Storage(String),
    /// Anything else.
    Other(String),
}
/// Runs one read on a reader's connection and delivers its result.
type ReadOp = Box<dyn FnOnce(&Connection) + Send>;

struct Applied {
    ok: bool,
    complete: Completion,
}

/// The connection threads and the channels to them.
pub(crate) struct Runtime {
    writer: RwLock<Option<Sender<WriteOp>>>,
    readers: RwLock<Option<Sender<ReadOp>>>,
    /// Each thread holds the sender of one of these and drops it when it exits.
    exited: Mutex<Vec<oneshot::Receiver<()>>>,
    path: PathBuf,
    stats: Arc<Counters>,
}

/// What the writer has done, for [`crate::SqliteStore::write_stats`].
#[derive(Default)]
pub(crate) struct Counters {
    writes: AtomicU64,
    transactions: AtomicU64,
}

/// Counts of the writer's work since the store was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteStats {
    /// Writes committed.
    pub writes: u64,
    /// Transactions committed: fewer than `writes` when group commit batched them.
    pub transactions: u64,
}

fn closed() -> StoreError {
    StoreError::Unavailable("the store is closed".to_owned())
}

impl Runtime {
    /// Opens the database: the writer first (it sets WAL mode and migrates), then readers.
    pub(crate) async fn start(path: &Path, options: &SqliteOptions) -> Result<Self, StoreError> {
        let mut exited = Vec::new();

        let (ready_tx, ready_rx) = oneshot::channel();
        let (write_tx, write_rx) = crossbeam_channel::unbounded::<WriteOp>();
        let (exit_tx, exit_rx) = oneshot::channel::<()>();
        exited.push(exit_rx);
        let writer_path = path.to_owned();
        let writer_options = options.clone();
        let stats = Arc::new(Counters::default());
        let writer_stats = Arc::clone(&stats);
        spawn("leadtrack-sqlite-writer", move || {
            let _exit = exit_tx;
            let conn = match open_writer(&writer_path, &writer_options) {
                Ok(conn) => {
                    let _ = ready_tx.send(Ok(()));
                    conn
                }
                Err(err) => {
                    let _ = ready_tx.send(Err(err));
                    return;
                }
            };
            run_writer(&conn, &write_rx, &writer_stats);
        })?;
        ready_rx.await.map_err(|_| closed())??;

        let (read_tx, read_rx) = crossbeam_channel::unbounded::<ReadOp>();
        let mut ready = Vec::new();
        for n in 0..options.readers.max(1) {
            let (ready_tx, ready_rx) = oneshot::channel();
            let (exit_tx, exit_rx) = oneshot::channel::<()>();
            exited.push(exit_rx);
            ready.push(ready_rx);
            let reader_path = path.to_owned();
            let busy_timeout = options.busy_timeout;
            let read_rx = read_rx.clone();
            spawn(&format!("leadtrack-sqlite-reader-{n}"), move || {
                let _exit = exit_tx;
                match open_reader(&reader_path, busy_timeout) {
                    Ok(conn) => {
                        let _ = ready_tx.send(Ok(()));
                        run_reader(&conn, &read_rx);
                    }
                    Err(err) => {
                        let _ = ready_tx.send(Err(err));
                    }
                }
            })?;
        }
        for ready_rx in ready {
            ready_rx.await.map_err(|_| closed())??;
        }

        Ok(Self {
            writer: RwLock::new(Some(write_tx)),
            readers: RwLock::new(Some(read_tx)),
            exited: Mutex::new(exited),
            path: path.to_owned(),
            stats,
        })
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// What the writer has committed so far.
    pub(crate) fn write_stats(&self) -> WriteStats {
        WriteStats {
            writes: self.stats.writes.load(Ordering::Relaxed),
            transactions: self.stats.transactions.load(Ordering::Relaxed),
        }
    }

    /// Runs `f` in the writer's transaction; resolves once the transaction is committed.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, Error> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let op: WriteOp = Box::new(move |conn| {
            let result = match conn {
                Some(conn) => f(conn).map_err(StoreError::from),
                None => Err(StoreError::Unavailable(
                    "the database could not start a transaction".to_owned(),
                )),
            };
            Applied {
                ok: result.is_ok(),
                complete: Box::new(move |commit| {
                    let outcome = match commit {
                        Ok(()) => result,
                        Err(CommitFailure::Storage(message)) => {
                            Err(StoreError::Unavailable(message))
                        }
                        Err(CommitFailure::Other(message)) => {
                            Err(StoreError::Backend(message.into()))
                        }
                    };
                    let _ = tx.send(outcome);
                }),
            }
        });
        send(&self.writer, op)?;
        rx.await.map_err(|_| dropped())?
    }

    /// Runs `f` on a reader's connection, in one read transaction (a consistent snapshot).
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, Error> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let op: ReadOp = Box::new(move |conn| {
            let result = in_read_transaction(conn, f).map_err(StoreError::from);
            let _ = tx.send(result);
        });
        send(&self.readers, op)?;
        rx.await.map_err(|_| dropped())?
    }

    /// Stops accepting work, lets the threads finish what they were given (every write
    /// already sent is committed), and waits until their connections are closed.
    pub(crate) async fn close(&self) {
        take_sender(&self.writer);
        take_sender(&self.readers);
        let exited =
            std::mem::take(&mut *self.exited.lock().unwrap_or_else(PoisonError::into_inner));
        for exit in exited {
            // The sender is dropped when the thread ends; that is the signal.
            let _ = exit.await;
        }
    }
}

fn dropped() -> StoreError {
    StoreError::Backend("the database thread dropped the request".into())
}

fn send<T>(sender: &RwLock<Option<Sender<T>>>, op: T) -> Result<(), StoreError> {
    let guard = sender.read().unwrap_or_else(PoisonError::into_inner);
    let sender = guard.as_ref().ok_or_else(closed)?;
    sender.send(op).map_err(|_| closed())
}

fn take_sender<T>(sender: &RwLock<Option<Sender<T>>>) {
    sender
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), StoreError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map(drop)
        .map_err(StoreError::backend)
}

fn open_writer(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
    let mut conn = Connection::open(path).map_err(StoreError::backend)?;
    conn.busy_timeout(options.busy_timeout)
        .map_err(StoreError::backend)?;
    // journal_mode answers with the mode it is in; anything but WAL means the file
    // cannot do it (e.g. a read-only directory), which we refuse rather than run slow.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(StoreError::backend)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Invalid(format!(
            "the database could not switch to WAL mode (it is in {mode} mode)"
        )));
    }
    conn.pragma_update(None, "synchronous", options.synchronous.pragma())
        .map_err(StoreError::backend)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(StoreError::backend)?;
    conn.set_prepared_statement_cache_capacity(64);
    schema::migrate(&mut conn)?;
    Ok(conn)
}

fn open_reader(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).map_err(StoreError::backend)?;
    conn.busy_timeout(busy_timeout)
        .map_err(StoreError::backend)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

fn in_read_transaction<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, Error>,
) -> Result<T, Error> {
    conn.execute_batch("BEGIN DEFERRED")?;
    let result = f(conn);
    // A read transaction has nothing to keep: ending it only releases the snapshot.
    let _ = conn.execute_batch("COMMIT");
    result
}

fn run_reader(conn: &Connection, ops: &Receiver<ReadOp>) {
    while let Ok(op) = ops.recv() {
        // A panicking read loses its own answer (its caller sees an error), not the thread.
        if catch_unwind(AssertUnwindSafe(|| op(conn))).is_err() {
            tracing::error!("a read on the SQLite store panicked");
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
    }
}

fn run_writer(conn: &Connection, ops: &Receiver<WriteOp>, stats: &Counters) {
    while let Ok(first) = ops.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match ops.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        commit_batch(conn, batch, stats);
    }
}

/// Runs a batch of writes in one transaction, then acknowledges each.
fn commit_batch(conn: &Connection, batch: Vec<WriteOp>, stats: &Counters) {
    if let Err(err) = conn.execute_batch("BEGIN IMMEDIATE") {
        tracing::error!(error = %err, "could not begin a write transaction");
        for op in batch {
            (op(None).complete)(Ok(()));
        }
        return;
    }
    let mut completions = Vec::with_capacity(batch.len());
    for op in batch {
        // An error that aborts the whole transaction (disk full, I/O) leaves SQLite in
        // autocommit mode; what follows must not run outside the transaction.
        if conn.is_autocommit() || conn.execute_batch("SAVEPOINT op").is_err() {
            completions.push(op(None).complete);
            continue;
        }
        let applied = match catch_unwind(AssertUnwindSafe(|| op(Some(conn)))) {
            Ok(applied) => applied,
            Err(_) => {
                tracing::error!("a write on the SQLite store panicked");
                let _ = conn.execute_batch("ROLLBACK TO op; RELEASE op");
                continue;
            }
        };
        let end = if applied.ok {
            "RELEASE op"
        } else {
            "ROLLBACK TO op; RELEASE op"
        };
        if !conn.is_autocommit() {
            let _ = conn.execute_batch(end);
        }
        completions.push(applied.complete);
    }
    let commit = if conn.is_autocommit() {
        // A write's error aborted the transaction (SQLite does so on a full disk or an I/O
        // error): nothing of the batch happened, so its writes can be tried again.
        Err(CommitFailure::Storage(
            "the write transaction was aborted".to_owned(),
        ))
    } else {
        conn.execute_batch("COMMIT").map_err(|err| {
            tracing::error!(error = %err, "could not commit a write transaction");
            let _ = conn.execute_batch("ROLLBACK");
            if crate::rows::is_storage_fault(&err) {
                CommitFailure::Storage("the storage refused the write".to_owned())
            } else {
                CommitFailure::Other(format!("commit failed: {err}"))
            }
        })
    };
    if commit.is_ok() {
        // Counted before anyone is told, so a caller that saw its write acknowledged
        // sees it counted.
        stats
            .writes
            .fetch_add(completions.len() as u64, Ordering::Relaxed);
        stats.transactions.fetch_add(1, Ordering::Relaxed);
    }
    for complete in completions {
        complete(commit.clone());
    }
}
