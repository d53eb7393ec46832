//! The threads that own the SQLite connections, so that no SQLite call ever runs on an
//! async runtime's thread.
//!
//! One writer thread owns the only write connection. Writes arrive over a channel; when
//! several are waiting, the writer runs them all in one `BEGIN IMMEDIATE` transaction, each
//! inside its own savepoint (a failing write rolls back alone), and acknowledges them only
//! after the `COMMIT`. With [`Synchronous::Full`] they are acknowledged only once they are
//! durable: a syncer thread fsyncs the WAL after each commit, then acknowledges every batch
//! committed before that fsync began (group commit). The connection itself runs with
//! `synchronous=NORMAL` (no fsync inside `COMMIT`; SQLite still syncs around checkpoints),
//! so the writer goes on with the next batch while the last one is being made durable,
//! instead of waiting for the disk. (Readers, and the worker's claims, may so see a write a
//! few milliseconds before its caller is told; what a power loss can take is only what was
//! never acknowledged.) Readers are threads, each with its own connection; in
//! WAL mode they never wait for the writer.
//!
//! Readers form two pools, so that one client's expensive reads cannot starve everyone's
//! cheap ones: [`Lane::Quick`] for point lookups through an index (an API key, a project, one
//! lead, a session), which every request needs, and [`Lane::Heavy`] for whatever scans a
//! project's leads (listings, searches, counts, reports, exports). Each pool's queue is
//! bounded: when it is full a read fails at once with [`StoreError::Unavailable`] (a `503`
//! with `Retry-After`) instead of waiting behind work it cannot overtake. One project may
//! hold at most half of the heavy pool's places (its threads and its queue), so that its
//! flood leaves room for the other projects' listings. Each read runs
//! under a time limit, and a read whose caller has gone (its future was dropped) is skipped
//! if it has not started, and stopped if it has: a progress handler on every reader
//! connection interrupts the statement.
//!
//! Through the `metrics` facade (recorded when the process installs a recorder): the
//! writer's batch sizes (`leadtrack_sqlite_write_batch_size`), how long each batch's
//! transaction takes (`leadtrack_sqlite_commit_duration_seconds`) and each fsync
//! (`leadtrack_sqlite_fsync_duration_seconds`), the writes waiting
//! (`leadtrack_sqlite_write_queue_depth`), the leads added to the words' index after their
//! commit and each batch's time (`leadtrack_sqlite_words_indexed_total`,
//! `leadtrack_sqlite_words_index_duration_seconds`), each reader pool's waiting reads
//! (`leadtrack_sqlite_read_queue_depth{pool}`) and the reads refused for a full queue
//! (`leadtrack_sqlite_reads_refused_total{pool}`).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use leadtrack_core::StoreError;
use leadtrack_core::types::ProjectId;
use leadtrack_core::vault::Vault;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use crate::{Error, ReadPool, SqliteOptions, Synchronous};
use crate::{schema, secrets};

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 512;

/// The WAL's length, in pages, past which a commit copies it into the database (SQLite's
/// default is 1,000): a lead writes about 11 pages, many of them the same hot pages as the
/// leads before it, which a checkpoint copies once however often the WAL holds them. At
/// 1,000 the writer checkpointed some twenty times a second under load, and spent a fifth
/// more time per lead (docs/performance.md). The WAL file stays about 40 MiB.
const CHECKPOINT_PAGES: i64 = 10_000;

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
/// Runs one read on a reader and delivers its result.
type ReadOp = Box<dyn FnOnce(&Reader) + Send>;

/// How many SQLite virtual-machine steps run between two checks of a read's time limit and
/// its caller: a few microseconds of work, so a stopped read ends at once.
const CHECK_EVERY: std::ffi::c_int = 1_000;

/// Each reader connection's page cache, in KiB (SQLite's default is 2,000 KiB). The six
/// readers' caches filled with the trigram index's pages after a few searches and made
/// a tenth of the server's memory; the pages they miss come from the operating system's
/// file cache, at no measurable cost to searches (`docs/performance.md`).
const READER_CACHE_KIB: i64 = 512;

/// The writer's page cache, in KiB. Each new lead lands on random pages of the name,
/// email and lookup indexes, which SQLite's default 2,000 KiB missed after a few thousand
/// leads: with 64 MiB the writer spends a tenth less time per lead at 60,000 leads
/// (`docs/performance.md`), and more as the indexes grow.
const WRITER_CACHE_KIB: i64 = 65_536;

/// Which reader pool serves a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Point lookups through an index, which every request makes (authentication, the
    /// project of a createLead, one lead, a session): kept fast whatever else runs.
    Quick,
    /// Reads that scan many of this project's leads: listings, searches, counts, reports,
    /// exports.
    Heavy(ProjectId),
}

impl Lane {
    fn name(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Heavy(_) => "heavy",
        }
    }
}

/// How many heavy reads each project has running or waiting, and how many it may.
struct Shares {
    most: usize,
    in_flight: Mutex<HashMap<ProjectId, usize>>,
}

impl Shares {
    /// Counts one more heavy read of `project`, unless it already holds its share.
    fn take(self: &Arc<Self>, project: ProjectId) -> Result<Share, StoreError> {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = in_flight.entry(project).or_default();
        if *count >= self.most {
            return Err(StoreError::Unavailable(
                "this project has too many heavy reads waiting".to_owned(),
            ));
        }
        *count += 1;
        Ok(Share {
            shares: Arc::clone(self),
            project,
        })
    }
}

/// One heavy read's place in its project's share, given back when the read's future ends.
struct Share {
    shares: Arc<Shares>,
    project: ProjectId,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut in_flight = self
            .shares
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = in_flight.get_mut(&self.project) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&self.project);
            }
        }
    }
}

struct Applied {
    ok: bool,
    complete: Completion,
}

/// The connection threads and the channels to them.
pub(crate) struct Runtime {
    writer: RwLock<Option<Sender<WriteOp>>>,
    quick: RwLock<Option<Sender<ReadOp>>>,
    heavy: RwLock<Option<Sender<ReadOp>>>,
    shares: Arc<Shares>,
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
    syncs: AtomicU64,
}

/// Counts of the writer's work since the store was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteStats {
    /// Writes committed.
    pub writes: u64,
    /// Transactions committed: fewer than `writes` when group commit batched them.
    pub transactions: u64,
    /// Fsyncs of the WAL that made committed transactions durable before they were
    /// acknowledged (with [`Synchronous::Full`]): at most `transactions`, fewer when one
    /// fsync covered several.
    pub syncs: u64,
}

fn closed() -> StoreError {
    StoreError::Unavailable("the store is closed".to_owned())
}

impl Runtime {
    /// Opens the database: the writer first (it sets WAL mode and migrates), then readers.
    pub(crate) async fn start(
        path: &Path,
        options: &SqliteOptions,
        vault: Vault,
    ) -> Result<Self, StoreError> {
        let mut exited = Vec::new();

        let (ready_tx, ready_rx) = oneshot::channel();
        let (write_tx, write_rx) = crossbeam_channel::unbounded::<WriteOp>();
        let (exit_tx, exit_rx) = oneshot::channel::<()>();
        exited.push(exit_rx);
        let writer_path = path.to_owned();
        let writer_options = options.clone();
        let stats = Arc::new(Counters::default());
        let writer_stats = Arc::clone(&stats);
        let durable = match options.synchronous {
            Synchronous::Full => {
                let (batches_tx, batches_rx) = crossbeam_channel::unbounded::<Vec<Completion>>();
                let (exit_tx, exit_rx) = oneshot::channel::<()>();
                exited.push(exit_rx);
                let mut wal = path.as_os_str().to_owned();
                wal.push("-wal");
                let syncer_stats = Arc::clone(&stats);
                spawn("sqlite-syncer", move || {
                    let _exit = exit_tx;
                    run_syncer(Path::new(&wal), &batches_rx, &syncer_stats);
                })?;
                Some(batches_tx)
            }
            Synchronous::Normal => None,
        };
        spawn("sqlite-writer", move || {
            let _exit = exit_tx;
            let conn = match open_writer(&writer_path, &writer_options, &vault) {
                Ok(conn) => {
                    let _ = ready_tx.send(Ok(()));
                    conn
                }
                Err(err) => {
                    let _ = ready_tx.send(Err(err));
                    return;
                }
            };
            run_writer(&conn, &write_rx, &writer_stats, durable.as_ref());
        })?;
        ready_rx.await.map_err(|_| closed())??;

        let mut ready = Vec::new();
        let quick = start_pool(
            "quick",
            path,
            &options.quick,
            options,
            &mut ready,
            &mut exited,
        )?;
        let heavy = start_pool(
            "heavy",
            path,
            &options.heavy,
            options,
            &mut ready,
            &mut exited,
        )?;
        for ready_rx in ready {
            ready_rx.await.map_err(|_| closed())??;
        }

        Ok(Self {
            writer: RwLock::new(Some(write_tx)),
            quick: RwLock::new(Some(quick)),
            heavy: RwLock::new(Some(heavy)),
            shares: Arc::new(Shares {
                most: ((options.heavy.readers.max(1) + options.heavy.queue.max(1)) / 2).max(1),
                in_flight: Mutex::default(),
            }),
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
            syncs: self.stats.syncs.load(Ordering::Relaxed),
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

    /// Runs `f` on a connection of `lane`'s pool, in one read transaction (a consistent
    /// snapshot). Fails at once with [`StoreError::Unavailable`] when the pool's queue is
    /// full, and with it too when the read waited for a reader longer than the pool's time
    /// limit (it is refused without running) or runs longer than that (it is interrupted).
    pub(crate) async fn read<T, F>(&self, lane: Lane, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, Error> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let queued = Instant::now();
        // Raised when this future ends, answered or dropped: a reader skips or stops the read
        // of a caller that has gone.
        let gone = GoneOnDrop(Arc::new(AtomicBool::new(false)));
        let caller = Arc::clone(&gone.0);
        let op: ReadOp = Box::new(move |reader| {
            if caller.load(Ordering::Relaxed) {
                return;
            }
            let _ = tx.send(reader.run(&caller, queued, f));
        });
        let (pool, share) = match lane {
            Lane::Quick => (&self.quick, None),
            Lane::Heavy(project) => (&self.heavy, Some(self.shares.take(project)?)),
        };
        try_send(pool, op, lane)?;
        let result = rx.await.map_err(|_| dropped())?;
        drop((gone, share));
        result
    }

    /// Stops accepting work, lets the threads finish what they were given (every write
    /// already sent is committed), and waits until their connections are closed.
    pub(crate) async fn close(&self) {
        take_sender(&self.writer);
        take_sender(&self.quick);
        take_sender(&self.heavy);
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

/// Gives the runtime's series their help text (see the module's documentation).
pub fn describe_metrics() {
    metrics::describe_histogram!(
        "leadtrack_sqlite_write_batch_size",
        "Writes committed together in one transaction"
    );
    metrics::describe_histogram!(
        "leadtrack_sqlite_commit_duration_seconds",
        metrics::Unit::Seconds,
        "How long each batch's write transaction took"
    );
    metrics::describe_histogram!(
        "leadtrack_sqlite_fsync_duration_seconds",
        metrics::Unit::Seconds,
        "How long each fsync of the write-ahead log took"
    );
    metrics::describe_gauge!(
        "leadtrack_sqlite_write_queue_depth",
        "Writes waiting for the writer"
    );
    metrics::describe_gauge!(
        "leadtrack_sqlite_read_queue_depth",
        "Reads waiting for a reader, by pool"
    );
    metrics::describe_counter!(
        "leadtrack_sqlite_words_indexed_total",
        "Leads the writer added to the words' index after their commit"
    );
    metrics::describe_histogram!(
        "leadtrack_sqlite_words_index_duration_seconds",
        metrics::Unit::Seconds,
        "How long each batch of the words' index took"
    );
    metrics::describe_counter!(
        "leadtrack_sqlite_reads_refused_total",
        "Reads refused because their pool's queue was full or they waited for a reader past its time limit, by pool"
    );
}

/// Counts a read of `pool` refused before it ran.
fn count_refused(pool: &'static str) {
    metrics::counter!("leadtrack_sqlite_reads_refused_total", "pool" => pool).increment(1);
}

/// Queues a read on its pool unless the pool's queue is full.
fn try_send(
    pool: &RwLock<Option<Sender<ReadOp>>>,
    op: ReadOp,
    lane: Lane,
) -> Result<(), StoreError> {
    let guard = pool.read().unwrap_or_else(PoisonError::into_inner);
    let sender = guard.as_ref().ok_or_else(closed)?;
    let sent = sender.try_send(op).map_err(|err| match err {
        TrySendError::Full(_) => {
            count_refused(lane.name());
            StoreError::Unavailable(format!("too many {} reads are waiting", lane.name()))
        }
        TrySendError::Disconnected(_) => closed(),
    });
    metrics::gauge!("leadtrack_sqlite_read_queue_depth", "pool" => lane.name())
        .set(sender.len() as f64);
    sent
}

fn take_sender<T>(sender: &RwLock<Option<Sender<T>>>) {
    sender
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
}

/// Starts a thread of the store. Short names (up to 15 bytes, all Linux keeps of a thread's
/// name) let `top -H`, `perf` and `scripts/profile` tell the writer, the syncer and each
/// reader apart.
fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), StoreError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map(drop)
        .map_err(StoreError::backend)
}

fn open_writer(
    path: &Path,
    options: &SqliteOptions,
    vault: &Vault,
) -> Result<Connection, StoreError> {
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
    // No fsync inside COMMIT: with `Synchronous::Full` the syncer makes each commit durable
    // before it is acknowledged (see the module's documentation).
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(StoreError::backend)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(StoreError::backend)?;
    conn.set_prepared_statement_cache_capacity(64);
    compile_once(&conn)?;
    schema::migrate(&mut conn)?;
    // Each write runs in a savepoint of the batch's transaction, whose statement journal
    // holds the pages it changes: in memory, not in a temporary file (a tenth of the
    // writer's time went to its writes). After the migrations, whose index builds may sort
    // more than memory should hold.
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(StoreError::backend)?;
    conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES)
        .map_err(StoreError::backend)?;
    // A negative size is in KiB.
    conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
        .map_err(StoreError::backend)?;
    secrets::prepare(&mut conn, vault)?;
    Ok(conn)
}

/// Makes the plans of `conn`'s statements independent of the values bound to them (the
/// query planner's stability guarantee), so each is compiled once. Without it, SQLite
/// compiles a statement again on each run whose parameters it compared with a partial
/// index's condition: every lookup of a new lead (a fifth of the writer's time), and `q`
/// searches. Our partial indexes' conditions are met by the column's own test
/// (`email_key = ?` implies `email_key IS NOT NULL`) or by literals, never by a bound
/// value.
fn compile_once(conn: &Connection) -> Result<(), StoreError> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map(drop)
        .map_err(StoreError::backend)
}

/// Starts a pool's reader threads; returns the sender of its bounded queue.
fn start_pool(
    name: &'static str,
    path: &Path,
    pool: &ReadPool,
    options: &SqliteOptions,
    ready: &mut Vec<oneshot::Receiver<Result<(), StoreError>>>,
    exited: &mut Vec<oneshot::Receiver<()>>,
) -> Result<Sender<ReadOp>, StoreError> {
    let (read_tx, read_rx) = crossbeam_channel::bounded::<ReadOp>(pool.queue.max(1));
    for n in 0..pool.readers.max(1) {
        let (ready_tx, ready_rx) = oneshot::channel();
        let (exit_tx, exit_rx) = oneshot::channel::<()>();
        exited.push(exit_rx);
        ready.push(ready_rx);
        let reader_path = path.to_owned();
        let busy_timeout = options.busy_timeout;
        let time_limit = pool.time_limit;
        let read_rx = read_rx.clone();
        spawn(&format!("sqlite-{name}-{n}"), move || {
            let _exit = exit_tx;
            match Reader::open(&reader_path, name, busy_timeout, time_limit) {
                Ok(reader) => {
                    let _ = ready_tx.send(Ok(()));
                    run_reader(&reader, &read_rx);
                }
                Err(err) => {
                    let _ = ready_tx.send(Err(err));
                }
            }
        })?;
    }
    Ok(read_tx)
}

/// Sets the caller's gone flag when a read's future ends, whether answered or dropped.
struct GoneOnDrop(Arc<AtomicBool>);

impl Drop for GoneOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A reader thread's connection, and the watch its progress handler keeps over the running
/// read.
struct Reader {
    conn: Connection,
    watch: Arc<Watch>,
    /// The pool's name, for its metrics.
    pool: &'static str,
    time_limit: Duration,
}

/// Why a read was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    TimeLimit,
    CallerGone,
}

/// What the progress handler checks: the running read's deadline and its caller.
#[derive(Default)]
struct Watch(Mutex<Option<Running>>);

struct Running {
    deadline: Instant,
    caller_gone: Arc<AtomicBool>,
    stopped: Option<Stop>,
}

impl Watch {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Called by SQLite every [`CHECK_EVERY`] steps: `true` interrupts the statement.
    fn should_stop(&self) -> bool {
        let mut running = self.lock();
        let Some(running) = running.as_mut() else {
            return false;
        };
        if running.stopped.is_none() {
            if running.caller_gone.load(Ordering::Relaxed) {
                running.stopped = Some(Stop::CallerGone);
            } else if Instant::now() >= running.deadline {
                running.stopped = Some(Stop::TimeLimit);
            }
        }
        running.stopped.is_some()
    }

    fn start(&self, deadline: Instant, caller_gone: &Arc<AtomicBool>) {
        *self.lock() = Some(Running {
            deadline,
            caller_gone: Arc::clone(caller_gone),
            stopped: None,
        });
    }

    /// Ends the watch over a read; says whether it was stopped.
    fn finish(&self) -> Option<Stop> {
        self.lock().take().and_then(|running| running.stopped)
    }
}

impl Reader {
    fn open(
        path: &Path,
        pool: &'static str,
        busy_timeout: Duration,
        time_limit: Duration,
    ) -> Result<Self, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let mut conn = Connection::open_with_flags(path, flags).map_err(StoreError::backend)?;
        conn.busy_timeout(busy_timeout)
            .map_err(StoreError::backend)?;
        conn.set_prepared_statement_cache_capacity(64);
        compile_once(&conn)?;
        crate::packed::register(&conn).map_err(StoreError::backend)?;
        // A negative size is in KiB.
        conn.pragma_update(None, "cache_size", -READER_CACHE_KIB)
            .map_err(StoreError::backend)?;
        let watch = Arc::new(Watch::default());
        let handler = Arc::clone(&watch);
        conn.progress_handler(CHECK_EVERY, Some(move || handler.should_stop()))
            .map_err(StoreError::backend)?;
        Ok(Self {
            conn,
            watch,
            pool,
            time_limit,
        })
    }

    /// Runs `f`, queued at `queued`, in one read transaction under the time limit while the
    /// caller waits, unless it waited longer than that limit already: an answer after a
    /// caller waited many seconds for a reader is one no one wanted, and the reader's time
    /// is better given to the reads queued behind it. A read that starts has its whole limit
    /// to run, so none is cut short for having waited, and no started work is wasted.
    fn run<T>(
        &self,
        caller_gone: &Arc<AtomicBool>,
        queued: Instant,
        f: impl FnOnce(&Connection) -> Result<T, Error>,
    ) -> Result<T, StoreError> {
        if queued.elapsed() >= self.time_limit {
            count_refused(self.pool);
            return Err(StoreError::Unavailable(format!(
                "a read waited for a reader past its time limit of {:?}",
                self.time_limit
            )));
        }
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(Error::from)?;
        self.watch
            .start(Instant::now() + self.time_limit, caller_gone);
        let result = f(&self.conn);
        // Before the COMMIT, which a stopped watch would interrupt too.
        let stopped = self.watch.finish();
        // A read transaction has nothing to keep: ending it only releases the snapshot.
        let _ = self.conn.execute_batch("COMMIT");
        match stopped {
            // Whatever `f` made of the interrupted statement, its answer is incomplete.
            Some(Stop::TimeLimit) => Err(StoreError::Unavailable(format!(
                "a read ran past its time limit of {:?}",
                self.time_limit
            ))),
            Some(Stop::CallerGone) => Err(StoreError::Unavailable(
                "the caller of a read went away".to_owned(),
            )),
            None => result.map_err(StoreError::from),
        }
    }
}

fn run_reader(reader: &Reader, ops: &Receiver<ReadOp>) {
    while let Ok(op) = ops.recv() {
        // A panicking read loses its own answer (its caller sees an error), not the thread.
        if catch_unwind(AssertUnwindSafe(|| op(reader))).is_err() {
            tracing::error!("a read on the SQLite store panicked");
            reader.watch.finish();
            if !reader.conn.is_autocommit() {
                let _ = reader.conn.execute_batch("ROLLBACK");
            }
        }
    }
}

fn run_writer(
    conn: &Connection,
    ops: &Receiver<WriteOp>,
    stats: &Counters,
    durable: Option<&Sender<Vec<Completion>>>,
) {
    let mut words = crate::words::Upkeep::new();
    loop {
        // Derived data catches up while no write waits (or at its lag's end, below).
        let first = match ops.try_recv() {
            Ok(op) => op,
            Err(_) => {
                while words.run(conn, true) && ops.is_empty() {}
                match ops.recv() {
                    Ok(op) => op,
                    Err(_) => return,
                }
            }
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match ops.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        metrics::histogram!("leadtrack_sqlite_write_batch_size").record(batch.len() as f64);
        metrics::gauge!("leadtrack_sqlite_write_queue_depth").set(ops.len() as f64);
        let started = Instant::now();
        commit_batch(conn, batch, stats, durable);
        metrics::histogram!("leadtrack_sqlite_commit_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        words.run(conn, false);
    }
}

/// Makes committed batches durable, then acknowledges them: one fsync of the WAL for every
/// batch that arrived before it began. A failed fsync fails the batches it was for (their
/// writes may not survive a power loss), as a failed commit would.
fn run_syncer(wal: &Path, batches: &Receiver<Vec<Completion>>, stats: &Counters) {
    let mut file: Option<std::fs::File> = None;
    while let Ok(mut waiting) = batches.recv() {
        while let Ok(more) = batches.try_recv() {
            waiting.extend(more);
        }
        let started = Instant::now();
        let synced = match &file {
            Some(file) => file.sync_data(),
            None => std::fs::File::open(wal).and_then(|opened| {
                let synced = opened.sync_data();
                file = Some(opened);
                synced
            }),
        };
        metrics::histogram!("leadtrack_sqlite_fsync_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        let result = match synced {
            Ok(()) => {
                stats.syncs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(err) => {
                tracing::error!(error = %err, "could not make committed writes durable");
                Err(CommitFailure::Storage(
                    "the storage could not make the write durable".to_owned(),
                ))
            }
        };
        for complete in waiting {
            complete(result.clone());
        }
    }
}

/// Runs a batch of writes in one transaction, then acknowledges each, or, when `durable`,
/// hands their acknowledgements to the syncer.
fn commit_batch(
    conn: &Connection,
    batch: Vec<WriteOp>,
    stats: &Counters,
    durable: Option<&Sender<Vec<Completion>>>,
) {
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
        if let Some(syncer) = durable {
            // Acknowledged by the syncer once durable; should it be gone, nothing is.
            if let Err(unsent) = syncer.send(completions) {
                let failure = CommitFailure::Storage("the store is closing".to_owned());
                for complete in unsent.into_inner() {
                    complete(Err(failure.clone()));
                }
            }
            return;
        }
    }
    for complete in completions {
        complete(commit.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OptionalExtension;

    /// A query that never ends on its own.
    const ENDLESS: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                           SELECT count(*) FROM c";

    fn endless(conn: &Connection) -> Result<i64, Error> {
        Ok(conn.query_row(ENDLESS, [], |row| row.get(0))?)
    }

    fn one(conn: &Connection) -> Result<i64, Error> {
        Ok(conn.query_row("SELECT 1", [], |row| row.get(0))?)
    }

    /// A statement of some ten thousand steps: long enough for the time limit's checks.
    fn counted(conn: &Connection) -> Result<i64, Error> {
        Ok(conn.query_row(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000)
             SELECT count(*) FROM c",
            [],
            |row| row.get(0),
        )?)
    }

    /// A runtime over a fresh database whose heavy pool is `heavy`.
    async fn runtime(heavy: ReadPool) -> (tempfile::TempDir, Arc<Runtime>) {
        let dir = tempfile::tempdir().unwrap();
        let options = SqliteOptions {
            heavy,
            ..SqliteOptions::default()
        };
        let vault = Vault::new(&leadtrack_core::vault::SecretKey::generate());
        let runtime = Runtime::start(&dir.path().join("db"), &options, vault)
            .await
            .unwrap();
        (dir, Arc::new(runtime))
    }

    fn pool(readers: usize, queue: usize, time_limit: Duration) -> ReadPool {
        ReadPool {
            readers,
            queue,
            time_limit,
        }
    }

    /// Runs `f` as a heavy read of `project` in a task of its own.
    fn spawn_read(
        runtime: &Arc<Runtime>,
        project: i64,
        f: impl FnOnce(&Connection) -> Result<i64, Error> + Send + 'static,
    ) -> tokio::task::JoinHandle<Result<i64, StoreError>> {
        let runtime = Arc::clone(runtime);
        tokio::spawn(async move { runtime.read(Lane::Heavy(ProjectId(project)), f).await })
    }

    #[tokio::test]
    async fn readers_keep_a_small_page_cache_and_the_writer_a_large_one() {
        let (_dir, runtime) = runtime(pool(1, 4, Duration::from_secs(1))).await;
        for lane in [Lane::Quick, Lane::Heavy(ProjectId(1))] {
            let size: i64 = runtime
                .read(lane, |conn| {
                    Ok(conn.query_row("PRAGMA cache_size", [], |row| row.get(0))?)
                })
                .await
                .unwrap();
            assert_eq!(size, -512);
        }
        let writer: i64 = runtime
            .write(|conn| Ok(conn.query_row("PRAGMA cache_size", [], |row| row.get(0))?))
            .await
            .unwrap();
        assert_eq!(writer, -WRITER_CACHE_KIB);
        runtime.close().await;
    }

    /// Runs `lookup` twice with new values; how many times it ran, and how many times
    /// SQLite compiled it again.
    fn run_twice(conn: &Connection, lookup: &str) -> Result<(i32, i32), Error> {
        for (n, key) in ["ada@example.com", "grace@example.com"].iter().enumerate() {
            let found: Option<i64> = conn
                .prepare_cached(lookup)?
                .query_row((1, key, n as i64), |row| row.get(0))
                .optional()?;
            assert_eq!(found, None);
        }
        let statement = conn.prepare_cached(lookup)?;
        Ok((
            statement.get_status(rusqlite::StatementStatus::Run),
            statement.get_status(rusqlite::StatementStatus::RePrepare),
        ))
    }

    /// Statements run as compiled, whatever values they are given, on the writer and the
    /// readers: SQLite compiled a new lead's lookups again on each run (a fifth of the
    /// writer's time), and a `q` search too.
    #[tokio::test]
    async fn statements_are_not_compiled_again_for_new_values() {
        let (_dir, runtime) = runtime(pool(1, 4, Duration::from_secs(1))).await;
        let lookup = leadtrack_core::store::sql::duplicate_lookup("email_key", ["?1", "?2", "?3"]);
        let sql = lookup.clone();
        let written = runtime.write(move |conn| run_twice(conn, &sql)).await;
        let read = runtime
            .read(Lane::Quick, move |conn| run_twice(conn, &lookup))
            .await;
        // (runs, times compiled again)
        assert_eq!(written.unwrap(), (2, 0));
        assert_eq!(read.unwrap(), (2, 0));
    }

    #[tokio::test]
    async fn a_read_past_its_time_limit_is_stopped() {
        let (_dir, runtime) = runtime(pool(1, 4, Duration::from_millis(200))).await;
        let started = Instant::now();
        let err = runtime
            .read(Lane::Heavy(ProjectId(1)), endless)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // The reader is free again, and its next read runs under a fresh limit.
        assert_eq!(
            runtime.read(Lane::Heavy(ProjectId(1)), one).await.unwrap(),
            1
        );
        runtime.close().await;
    }

    #[tokio::test]
    async fn a_read_that_waited_past_its_time_limit_is_refused_without_running() {
        let (_dir, runtime) = runtime(pool(1, 4, Duration::from_millis(300))).await;
        // Busy outside SQL, where nothing interrupts it, for twice the limit.
        let busy = spawn_read(&runtime, 1, |_| {
            std::thread::sleep(Duration::from_millis(600));
            Ok(7)
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let ran = Arc::new(AtomicBool::new(false));
        let err = runtime
            .read(Lane::Heavy(ProjectId(2)), {
                let ran = Arc::clone(&ran);
                move |conn| {
                    ran.store(true, Ordering::Relaxed);
                    one(conn)
                }
            })
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Unavailable(message) if message.contains("waited")),
            "{err}"
        );
        assert!(!ran.load(Ordering::Relaxed), "the late read ran");
        assert_eq!(busy.await.unwrap().unwrap(), 7);
        // A read queued now has its whole limit again.
        assert_eq!(
            runtime.read(Lane::Heavy(ProjectId(2)), one).await.unwrap(),
            1
        );
        runtime.close().await;
    }

    #[tokio::test]
    async fn a_read_that_waited_has_its_whole_time_limit_to_run() {
        // Waiting 600 ms and running 600 ms: 1.2 s in all, each part under the limit.
        let (_dir, runtime) = runtime(pool(1, 4, Duration::from_secs(1))).await;
        let busy = spawn_read(&runtime, 1, |conn| {
            std::thread::sleep(Duration::from_millis(600));
            one(conn)
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let late = runtime
            .read(Lane::Heavy(ProjectId(2)), |conn| {
                std::thread::sleep(Duration::from_millis(600));
                // SQL after the sleep, where an interrupted read would fail.
                counted(conn)
            })
            .await;
        assert_eq!(late.unwrap(), 10_000);
        assert_eq!(busy.await.unwrap().unwrap(), 1);
        runtime.close().await;
    }

    #[tokio::test]
    async fn a_read_whose_caller_went_away_is_stopped() {
        let (_dir, runtime) = runtime(pool(1, 4, Duration::from_secs(600))).await;
        let gave_up = tokio::time::timeout(
            Duration::from_millis(100),
            runtime.read(Lane::Heavy(ProjectId(1)), endless),
        )
        .await;
        assert!(gave_up.is_err(), "the endless read answered");
        // The only heavy reader would be busy for ten minutes had the read run on.
        let next = tokio::time::timeout(
            Duration::from_secs(5),
            runtime.read(Lane::Heavy(ProjectId(1)), one),
        )
        .await
        .expect("the abandoned read was stopped");
        assert_eq!(next.unwrap(), 1);
        runtime.close().await;
    }

    #[tokio::test]
    async fn a_read_fails_at_once_when_its_queue_is_full_and_quick_reads_go_on() {
        let (_dir, runtime) = runtime(pool(1, 1, Duration::from_secs(600))).await;
        let running = spawn_read(&runtime, 1, endless);
        // Once the reader has taken the first read, the second one fills the queue.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let waiting = spawn_read(&runtime, 2, one);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let err = runtime
            .read(Lane::Heavy(ProjectId(3)), one)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
        assert!(started.elapsed() < Duration::from_secs(1));
        // The quick pool does not wait for the heavy one.
        let quick = tokio::time::timeout(Duration::from_secs(1), runtime.read(Lane::Quick, one))
            .await
            .expect("a quick read waited for a heavy one");
        assert_eq!(quick.unwrap(), 1);
        // Dropping the endless read's caller frees the reader for the one waiting.
        running.abort();
        let waited = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the queued read ran");
        assert_eq!(waited.unwrap().unwrap(), 1);
        runtime.close().await;
    }

    #[tokio::test]
    async fn one_project_holds_at_most_half_of_the_heavy_pool() {
        // One reader and three places in its queue: two for each project.
        let (_dir, runtime) = runtime(pool(1, 3, Duration::from_secs(600))).await;
        let flood: Vec<_> = (0..2).map(|_| spawn_read(&runtime, 1, endless)).collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let err = runtime
            .read(Lane::Heavy(ProjectId(1)), one)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
        // Another project still gets a place, and its answer once the reader is free.
        let other = spawn_read(&runtime, 2, one);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!other.is_finished(), "the reader was free");
        for read in flood {
            read.abort();
        }
        let answered = tokio::time::timeout(Duration::from_secs(5), other)
            .await
            .expect("the other project's read ran once the flood's callers went away");
        assert_eq!(answered.unwrap().unwrap(), 1);
        // Finished reads give their places back.
        assert_eq!(
            runtime.read(Lane::Heavy(ProjectId(1)), one).await.unwrap(),
            1
        );
        runtime.close().await;
    }
}
