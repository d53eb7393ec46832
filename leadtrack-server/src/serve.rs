//! `serve` and `worker`: the API on a listener and the conversion worker, until Ctrl-C or
//! SIGTERM.

use std::net::SocketAddr;
use std::sync::Arc;

use leadtrack_alerts::Alerter;
use leadtrack_core::target::Targets;
use leadtrack_core::{JobQueue, Store};
use leadtrack_forward::{Worker, WorkerConfig};
use leadtrack_warp::Config;
use tokio::net::TcpListener;
use tokio::sync::watch;
use warp::{Filter, Reply};

use crate::backend::Database;
use crate::cli::{Connections, MetricsArgs, ServeArgs, WorkerArgs, WorkerCommand};
use crate::mail::Links;
use crate::metrics::{self, Metrics};
use crate::{Failure, Readiness, ServeOptions, bootstrap};

/// Binds the address `serve` listens on.
pub(crate) async fn bind(addr: &str) -> Result<(TcpListener, SocketAddr), Failure> {
    let listener = TcpListener::bind(addr).await.map_err(|err| {
        Failure(format!(
            "cannot listen on {addr}: {err}; stop whatever uses it or pass --addr HOST:PORT"
        ))
    })?;
    let local = listener
        .local_addr()
        .map_err(|err| Failure(format!("cannot read the listening address: {err}")))?;
    Ok((listener, local))
}

/// `server serve`: the first run's project and owner, then the API and the dashboard on
/// `listener`, and the worker unless `--no-worker`, until Ctrl-C or SIGTERM.
pub(crate) async fn serve<S: Store + Clone>(
    store: S,
    listener: TcpListener,
    (addr, links, apps, targets): (SocketAddr, &Links, Connections, Targets),
    args: ServeArgs,
    db: &Database,
) -> Result<(), Failure> {
    let mailer = links.mailer()?;
    bootstrap::first_run(&store, addr, &args.owner_email).await?;
    let readiness = Readiness::new();
    if args.rate_limit_project.is_some() {
        tracing::warn!(
            "--rate-limit-project is retired and ignored: leads past a rate are held as spam, within each project's held budget (`server project set --held-budget`)"
        );
    }
    let config = Config {
        trust_forwarded_for: args.trust_forwarded_for,
        rate_limits: leadtrack_warp::RateLimits {
            per_ip: args.rate_limit_ip,
            per_key: args.rate_limit_key,
        },
        targets: targets.clone(),
        ..Config::default()
    };
    let outbound = leadtrack_platforms::check::client(targets.clone());
    let spend_apps = (apps.oauth.clone(), outbound.clone());
    let pages =
        leadtrack_sources::routes(store.clone(), apps.sources).or(leadtrack_dashboard::routes(
            store.clone(),
            leadtrack_dashboard::Config {
                trust_proxy: args.trust_forwarded_for,
                public_url: Some(links.public_url()),
                mailer,
                oauth: apps.oauth,
                outbound,
                ..leadtrack_dashboard::Config::default()
            },
        ));
    let pages = pages.unify();
    let stop = stop_on_signal();
    // The hourly read of ad spend goes with the worker, in one process of a deployment.
    let spend_reads = (!args.no_worker).then(|| {
        tokio::spawn(crate::spend::every_hour(
            store.clone(),
            spend_apps,
            stopped(&stop),
        ))
    });
    let metrics = Metrics::install(!args.metrics.metrics_no_project_label)?;
    // /metrics on its own address, or else on this one for local clients only.
    let pages = if serve_metrics(&metrics, &store, &args.metrics, &stop).await? {
        pages.boxed()
    } else {
        metrics::route(metrics, store.clone(), true)
            .or(pages)
            .unify()
            .boxed()
    };
    let worker = if args.no_worker {
        None
    } else {
        let work = background(&store, &args.worker, (links, &targets), &stop)?;
        Some(tokio::spawn(work))
    };
    tracing::info!(%addr, %db, worker = !args.no_worker, "leadtrack listening on http://{addr}");
    let app = crate::app_with(store, config, readiness.clone(), pages);
    let mut options = args.connections.options();
    if args.trust_forwarded_for {
        // Every connection comes from the proxy: the share would be the proxy's.
        options.max_connections_per_address = 0;
    }
    // On the signal /readyz turns 503 first; the listener closes once the delay is over.
    let stop_accepting = {
        let (stopped, delay) = (stopped(&stop), args.shutdown_delay);
        async move {
            stopped.await;
            readiness.drain();
            if !delay.is_zero() {
                tracing::info!(
                    ?delay,
                    "draining: /readyz answers 503 before the listener closes"
                );
                tokio::time::sleep(delay).await;
            }
        }
    };
    crate::serve_app_with(listener, app, options, stop_accepting).await;
    tracing::info!("stopped accepting requests");
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    if let Some(reads) = spend_reads {
        let _ = reads.await;
    }
    Ok(())
}

/// `server worker`: delivers conversions until Ctrl-C or SIGTERM, serving only its
/// metrics, on `--metrics-addr` when given.
pub(crate) async fn work<S: Store + Clone>(
    store: S,
    (args, links, targets): (&WorkerCommand, &Links, Targets),
    db: &Database,
) -> Result<(), Failure> {
    let stop = stop_on_signal();
    let work = background(&store, &args.worker, (links, &targets), &stop)?;
    let metrics = Metrics::install(!args.metrics.metrics_no_project_label)?;
    serve_metrics(&metrics, &store, &args.metrics, &stop).await?;
    tracing::info!(%db, "leadtrack worker delivering conversions and alerts, and fetching announced leads");
    work.await;
    Ok(())
}

/// The work beside the API, until `stop` is raised: conversion deliveries and lead
/// webhooks (with the concurrency and retry schedule of `args`), alerts, the fetches of
/// the leads the sources announce, each calling only the addresses `targets` allows, and
/// the projects' retention rule, once a day.
fn background<S: Store + Clone>(
    store: &S,
    args: &WorkerArgs,
    (links, targets): (&Links, &Targets),
    stop: &watch::Receiver<bool>,
) -> Result<impl Future<Output = ()> + Send + 'static, Failure> {
    let config = WorkerConfig {
        concurrency: args.worker_concurrency.max(1),
        lease: args.worker_lease,
        retry: args.retry.policy(),
        targets: targets.clone(),
        ..WorkerConfig::default()
    };
    let deliveries = Worker::new(store.clone(), config).run(stopped(stop));
    let (mailer, public_url) = (links.mailer()?, links.public_url());
    let alerter = Alerter::new(store.clone(), mailer, &public_url, targets.clone());
    let alerts = alerter.run(stopped(stop));
    let fetching = leadtrack_sources::FetcherConfig {
        targets: targets.clone(),
        ..leadtrack_sources::FetcherConfig::default()
    };
    let fetches = leadtrack_sources::Fetcher::new(store.clone(), fetching).run(stopped(stop));
    let retention = crate::retention::every_day(store.clone(), stopped(stop));
    Ok(async move {
        tokio::join!(deliveries, alerts, fetches, retention);
    })
}

/// Serves `GET /metrics` (to anyone who can reach it) on `--metrics-addr`, when given,
/// until the flag is raised; whether it did.
async fn serve_metrics<S: JobQueue + Clone>(
    metrics: &Arc<Metrics>,
    store: &S,
    args: &MetricsArgs,
    stop: &watch::Receiver<bool>,
) -> Result<bool, Failure> {
    let Some(addr) = &args.metrics_addr else {
        return Ok(false);
    };
    let (listener, local) = bind(addr).await?;
    let not_found = warp::any().map(|| {
        warp::reply::with_status("Not found", warp::http::StatusCode::NOT_FOUND).into_response()
    });
    let app = metrics::route(Arc::clone(metrics), store.clone(), false)
        .or(not_found)
        .unify();
    tracing::info!(addr = %local, "metrics on http://{local}/metrics");
    tokio::spawn(crate::serve_app_with(
        listener,
        app,
        ServeOptions::default(),
        stopped(stop),
    ));
    Ok(true)
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
