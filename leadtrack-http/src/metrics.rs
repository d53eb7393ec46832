//! What the lead routes and the dashboard count, through the `metrics` facade. A process
//! that installs a recorder gets these series (the standalone server installs a Prometheus
//! one and serves it at `/metrics`); without one, recording costs next to nothing.
//!
//! - `leadtrack_leads_created_total{route, project}`: new leads (not merges into one), by
//!   route and project (its public id; see [`set_project_label`]).
//! - `leadtrack_ratings_queued_total{project}`: ratings that queued a conversion job, through
//!   the API or the dashboard.
//! - `leadtrack_rate_limited_total{limit}`: requests refused `429`, by the bucket (`ip`,
//!   `project`, `key`).
//! - `leadtrack_requests_shed_total`: requests refused `503` because the store was
//!   overloaded.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether series carry a `project` label: on unless [`set_project_label`] turned it off.
static PROJECT_LABEL: AtomicBool = AtomicBool::new(true);

/// Turns the `project` label on or off, for the whole process. Off, a server with thousands
/// of projects keeps a few series instead of a few per project.
pub fn set_project_label(on: bool) {
    PROJECT_LABEL.store(on, Ordering::Relaxed);
}

/// Gives each series above its help text, for a recorder that shows it (call once, after
/// installing the recorder).
pub fn describe() {
    metrics::describe_counter!(
        "leadtrack_leads_created_total",
        "New leads, by route and project"
    );
    metrics::describe_counter!(
        "leadtrack_leads_held_total",
        "Leads held as spam on arrival, by reason"
    );
    metrics::describe_counter!(
        "leadtrack_ratings_queued_total",
        "Ratings that queued a conversion job, by project"
    );
    metrics::describe_counter!(
        "leadtrack_rate_limited_total",
        "Requests refused 429, by the limit they hit (ip, project, key)"
    );
    metrics::describe_counter!(
        "leadtrack_requests_shed_total",
        "Requests refused 503 because the store was overloaded"
    );
}

/// A new lead through `route` (`createLead` or `createServerSideLead`) of `project`.
pub fn lead_created(route: &'static str, project: &str) {
    if PROJECT_LABEL.load(Ordering::Relaxed) {
        metrics::counter!("leadtrack_leads_created_total", "route" => route, "project" => project.to_owned())
            .increment(1);
    } else {
        metrics::counter!("leadtrack_leads_created_total", "route" => route).increment(1);
    }
}

/// A rating of `project`'s lead that queued a conversion job.
pub fn rating_queued(project: &str) {
    if PROJECT_LABEL.load(Ordering::Relaxed) {
        metrics::counter!("leadtrack_ratings_queued_total", "project" => project.to_owned())
            .increment(1);
    } else {
        metrics::counter!("leadtrack_ratings_queued_total").increment(1);
    }
}

/// A request refused `503` because the store was overloaded.
pub fn shed() {
    metrics::counter!("leadtrack_requests_shed_total").increment(1);
}

/// A lead held as spam on arrival, by its reason.
pub fn held(reason: &'static str) {
    metrics::counter!("leadtrack_leads_held_total", "reason" => reason).increment(1);
}

/// A request refused `429` by the `limit` bucket.
pub fn rate_limited(limit: &'static str) {
    metrics::counter!("leadtrack_rate_limited_total", "limit" => limit).increment(1);
}
