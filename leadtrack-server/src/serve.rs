//! `serve` and `worker`: the API on a listener and the conversion worker, until Ctrl-C or
//! SIGTERM.

use std::path::Path;

use leadtrack_forward::{Worker, WorkerConfig};
use leadtrack_sqlite::SqliteStore;
use leadtrack_warp::Config;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::cli::{ServeArgs, WorkerArgs};
use crate::{Failure, bootstrap, open_store};

/// `server serve`: the API, and the worker unless `--no-worker`.
pub(crate) async fn serve(db: &Path, args: ServeArgs) -> Result<(), Failure> {
    // Bind first: a port in use is reported before the database is touched.
    let listener = TcpListener::bind(&args.addr).await.map_err(|err| {
        Failure(format!(
            "cannot listen on {}: {err}; stop whatever uses it or pass --addr HOST:PORT",
            args.addr
        ))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|err| Failure(format!("cannot read the listening address: {err}")))?;
    let store = open_store(db, true, 4).await?;
    if let Err(failure) = bootstrap::first_run(&store, addr).await {
        store.close().await;
        return Err(failure);
    }

    let config = Config {
        trust_forwarded_for: args.trust_forwarded_for,
        ..Config::default()
    };
    let stop = stop_on_signal();
    let worker = if args.no_worker {
        None
    } else {
        let worker = worker(&store, &args.worker)?;
        Some(tokio::spawn(worker.run(stopped(&stop))))
    };
    tracing::info!(%addr, db = %db.display(), worker = !args.no_worker, "leadtrack listening on http://{addr}");
    leadtrack_warp::serve(listener, store.clone(), config, stopped(&stop)).await;
    tracing::info!("stopped accepting requests");
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// `server worker`: delivers conversions until Ctrl-C or SIGTERM, serving nothing.
pub(crate) async fn work(db: &Path, args: WorkerArgs) -> Result<(), Failure> {
    let store = open_store(db, false, 2).await?;
    let worker = match worker(&store, &args) {
        Ok(worker) => worker,
        Err(failure) => {
            store.close().await;
            return Err(failure);
        }
    };
    let stop = stop_on_signal();
    tracing::info!(db = %db.display(), "leadtrack worker delivering conversions");
    worker.run(stopped(&stop)).await;
    store.close().await;
    Ok(())
}

fn worker(store: &SqliteStore, args: &WorkerArgs) -> Result<Worker<SqliteStore>, Failure> {
    let config = WorkerConfig {
        concurrency: args.worker_concurrency.max(1),
        ..WorkerConfig::default()
    };
    Worker::new(store.clone(), config).map_err(|err| {
        Failure(format!(
            "cannot set up the HTTP client of the worker: {err}"
        ))
    })
}

/// A flag raised on Ctrl-C or SIGTERM, for every part of the process to stop on.
fn stop_on_signal() -> watch::Receiver<bool> {
    let (raise, flag) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = raise.send(true);
    });
    flag
}

/// Resolves once the flag is raised.
fn stopped(flag: &watch::Receiver<bool>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut flag = flag.clone();
    async move {
        let _ = flag.wait_for(|raised| *raised).await;
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown requested");
}
