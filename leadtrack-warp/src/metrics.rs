//! What the lead routes and the standalone app count, through the `metrics` facade. A
//! process that installs a recorder gets these series (the standalone server installs a
//! Prometheus one and serves it at `/metrics`); without one, recording costs next to
//! nothing.
//!
//! - `leadtrack_http_requests_total{route, status}` and
//!   `leadtrack_http_request_duration_seconds{route}`: every request [`crate::app`] answers.
//!   `route` is a bounded set: the operation (`createLead`, `getLeads`, ...), `openapi`,
//!   `script`, `demo`, `health`, `healthz`, `readyz`, `metrics`, `assets`, `login`,
//!   `logout`, `dashboard`, or `other`.
//! - `leadtrack_leads_created_total{route, project}`: new leads (not merges into one), by
//!   route and project (its public id; see [`set_project_label`]).
//! - `leadtrack_ratings_queued_total{project}`: ratings that queued a conversion job, through
//!   the API or the dashboard.
//! - `leadtrack_rate_limited_total{limit}`: requests refused `429`, by the bucket (`ip`,
//!   `project`, `key`).
//! - `leadtrack_requests_shed_total`: requests refused `503` because the store was
//!   overloaded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::Operation;

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
        "leadtrack_http_requests_total",
        "HTTP requests answered, by route and status"
    );
    metrics::describe_histogram!(
        "leadtrack_http_request_duration_seconds",
        metrics::Unit::Seconds,
        "How long requests took to answer, by route"
    );
    metrics::describe_counter!(
        "leadtrack_leads_created_total",
        "New leads, by route and project"
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

/// A request refused `429` by the `limit` bucket.
pub(crate) fn rate_limited(limit: &'static str) {
    metrics::counter!("leadtrack_rate_limited_total", "limit" => limit).increment(1);
}

/// A request to `route` (see [`route`]) answered `status` after `elapsed`.
pub(crate) fn request(route: &'static str, status: u16, elapsed: Duration) {
    metrics::counter!("leadtrack_http_requests_total", "route" => route, "status" => status.to_string())
        .increment(1);
    metrics::histogram!("leadtrack_http_request_duration_seconds", "route" => route)
        .record(elapsed.as_secs_f64());
}

/// The `route` label of a path: one of a fixed set, so that made-up paths cannot add
/// series.
pub(crate) fn route(path: &str) -> &'static str {
    if let Some(segment) = path.strip_prefix("/api/leads/") {
        return Operation::from_segment(segment).map_or("other", Operation::segment);
    }
    match path {
        "/api/openapi.json" => "openapi",
        "/leadtrack.js" => "script",
        "/health" => "health",
        "/healthz" => "healthz",
        "/readyz" => "readyz",
        "/metrics" => "metrics",
        "/login" => "login",
        "/logout" => "logout",
        "/" => "dashboard",
        _ if path == "/demo" || path.starts_with("/demo/") => "demo",
        _ if path.starts_with("/assets/") => "assets",
        _ if path.starts_with("/projects/") || path == "/projects" => "dashboard",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_a_bounded_set() {
        for (path, route_label) in [
            ("/api/leads/createLead", "createLead"),
            ("/api/leads/getLeadActivity", "getLeadActivity"),
            ("/api/leads/nothing", "other"),
            ("/api/leads/createLead/x", "other"),
            ("/api/openapi.json", "openapi"),
            ("/readyz", "readyz"),
            ("/demo/contact", "demo"),
            ("/demonstration", "other"),
            ("/assets/app.css", "assets"),
            ("/projects/acme/leads/7", "dashboard"),
            ("/wp-login.php", "other"),
        ] {
            assert_eq!(route(path), route_label, "{path}");
        }
    }
}
