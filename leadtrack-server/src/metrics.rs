//! Prometheus metrics: the process-wide recorder every crate's counters go to, and
//! `GET /metrics`, rendering them in the text exposition format.
//!
//! The series come from the libraries (`leadtrack_http::metrics`, the SQLite store's
//! runtime, the forwarding worker), from the access log (`crate::access`), from this module (the delivery queues, read from the
//! store at each scrape) and from the process collector of `metrics-process` (resident
//! memory, open files, CPU time).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use leadtrack_core::JobQueue;
use leadtrack_core::job::QueueDepth;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use warp::http::header::{CONTENT_TYPE, HeaderValue};
use warp::http::{HeaderMap, StatusCode};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::Failure;

/// Histogram buckets of durations, in seconds: half a millisecond to ten seconds.
const SECONDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Histogram buckets of the writer's batch sizes.
const BATCH_SIZES: [f64; 11] = [
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// How long a scrape waits for the store's queue figures before rendering without them.
const QUEUE_DEADLINE: Duration = Duration::from_secs(1);

/// The installed recorder, and the process collector.
pub(crate) struct Metrics {
    handle: PrometheusHandle,
    process: metrics_process::Collector,
}

impl Metrics {
    /// Installs the process's recorder; `project_label` keeps the per-project label of the
    /// lead routes' series. Histograms are drained every few seconds, scraped or not, so
    /// that they never grow.
    pub(crate) fn install(project_label: bool) -> Result<Arc<Self>, Failure> {
        let failed = |err: metrics_exporter_prometheus::BuildError| {
            Failure(format!("cannot set up the metrics: {err}"))
        };
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), &SECONDS)
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full("leadtrack_sqlite_write_batch_size".to_owned()),
                    &BATCH_SIZES,
                )
            })
            .and_then(PrometheusBuilder::install_recorder)
            .map_err(failed)?;
        leadtrack_http::metrics::set_project_label(project_label);
        leadtrack_http::metrics::describe();
        crate::access::describe();
        leadtrack_sqlite::describe_metrics();
        leadtrack_forward::describe_metrics();
        metrics::describe_gauge!(
            "leadtrack_queue_queued",
            "Deliveries waiting for a worker, by queue (jobs, webhook_events)"
        );
        metrics::describe_gauge!(
            "leadtrack_queue_running",
            "Deliveries leased by a worker, by queue"
        );
        metrics::describe_gauge!(
            "leadtrack_queue_oldest_due_seconds",
            metrics::Unit::Seconds,
            "How long the first due delivery has waited, by queue"
        );
        let process = metrics_process::Collector::default();
        process.describe();
        let upkeep = handle.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(5));
            loop {
                every.tick().await;
                upkeep.run_upkeep();
            }
        });
        Ok(Arc::new(Self { handle, process }))
    }

    /// The metrics as Prometheus text, with the delivery queues as `store` has them now.
    async fn render<S: JobQueue>(&self, store: &S) -> String {
        match tokio::time::timeout(QUEUE_DEADLINE, store.queue_depth(Utc::now())).await {
            Ok(Ok(depths)) => {
                queue_gauges("jobs", depths.jobs);
                queue_gauges("webhook_events", depths.webhook_events);
                queue_gauges("lead_fetches", depths.lead_fetches);
            }
            Ok(Err(err)) => tracing::warn!(error = %err, "metrics without the queues"),
            Err(_) => tracing::warn!("metrics without the queues: the store did not answer"),
        }
        self.process.collect();
        self.handle.render()
    }
}

/// `leadtrack_queue_{queued,running,oldest_due_seconds}{queue}`.
fn queue_gauges(queue: &'static str, depth: QueueDepth) {
    metrics::gauge!("leadtrack_queue_queued", "queue" => queue).set(depth.queued as f64);
    metrics::gauge!("leadtrack_queue_running", "queue" => queue).set(depth.running as f64);
    let waited = depth.oldest_due_for.to_std().unwrap_or_default();
    metrics::gauge!("leadtrack_queue_oldest_due_seconds", "queue" => queue)
        .set(waited.as_secs_f64());
}

/// `GET /metrics`. With `local_only`, only a client on this machine that is not behind a
/// proxy (a loopback address, no `X-Forwarded-For`) gets them; anyone else is rejected as
/// if the path did not exist.
pub(crate) fn route<S: JobQueue + Clone>(
    metrics: Arc<Metrics>,
    store: S,
    local_only: bool,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    warp::path!("metrics")
        .and(warp::get())
        .and(leadtrack_http::remote())
        .and(warp::header::headers_cloned())
        .and_then(
            move |peer: Option<SocketAddr>, headers: HeaderMap| async move {
                let local = peer.is_some_and(|peer| peer.ip().is_loopback())
                    && !headers.contains_key("x-forwarded-for")
                    && !headers.contains_key("forwarded");
                if local_only && !local {
                    Err(warp::reject::not_found())
                } else {
                    Ok(())
                }
            },
        )
        .untuple_one()
        .then(move || {
            let (metrics, store) = (Arc::clone(&metrics), store.clone());
            async move {
                let text = metrics.render(&store).await;
                let mut response = warp::reply::with_status(text, StatusCode::OK).into_response();
                response.headers_mut().insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                );
                response
            }
        })
}
