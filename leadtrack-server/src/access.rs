//! The access log and the request metrics: one log line and one count per request the
//! standalone app answers, under a route label from a bounded set.
//!
//! - `leadtrack_http_requests_total{route, status}` and
//!   `leadtrack_http_request_duration_seconds{route}`. `route` is the operation
//!   (`createLead`, `getLeads`, ...), `openapi`, `script`, `demo`, `health`, `healthz`,
//!   `readyz`, `metrics`, `assets`, `login`, `logout`, `invitation`, `password`,
//!   `dashboard`, or `other`.
//! - Paths are logged with a one-use link's token replaced (`leadtrack_dashboard::redacted`).

use std::time::Duration;

use warp::filters::log::{Info, Log};

/// Gives the series above their help text (call once, after installing the recorder).
pub(crate) fn describe() {
    metrics::describe_counter!(
        "leadtrack_http_requests_total",
        "HTTP requests answered, by route and status"
    );
    metrics::describe_histogram!(
        "leadtrack_http_request_duration_seconds",
        metrics::Unit::Seconds,
        "How long requests took to answer, by route"
    );
}

/// The filter wrapper that logs and counts each request (method, path without the query
/// and without a link's token, route, status, latency).
pub(crate) fn log() -> Log<impl Fn(Info<'_>) + Copy> {
    warp::log::custom(|info| {
        let route = route(info.path());
        request(route, info.status().as_u16(), info.elapsed());
        tracing::info!(
            route,
            method = %info.method(),
            path = %leadtrack_dashboard::redacted(info.path()),
            status = info.status().as_u16(),
            latency_ms = info.elapsed().as_secs_f64() * 1000.0,
            "request"
        );
    })
}

/// A request to `route` (see [`route`]) answered `status` after `elapsed`.
fn request(route: &'static str, status: u16, elapsed: Duration) {
    metrics::counter!("leadtrack_http_requests_total", "route" => route, "status" => status.to_string())
        .increment(1);
    metrics::histogram!("leadtrack_http_request_duration_seconds", "route" => route)
        .record(elapsed.as_secs_f64());
}

/// The `route` label of a path: one of a fixed set, so that made-up paths cannot add
/// series.
fn route(path: &str) -> &'static str {
    let server = match path {
        "/api/openapi.json" => Some("openapi"),
        "/leadtrack.js" => Some("script"),
        "/health" => Some("health"),
        "/healthz" => Some("healthz"),
        "/readyz" => Some("readyz"),
        "/metrics" => Some("metrics"),
        _ if path == "/demo" || path.starts_with("/demo/") => Some("demo"),
        _ => None,
    };
    server
        .or_else(|| leadtrack_warp::operation_at(path))
        .or_else(|| leadtrack_dashboard::label(path))
        .unwrap_or("other")
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
            ("/assets/nothing.css", "other"),
            ("/login", "login"),
            ("/", "dashboard"),
            ("/projects/acme/leads/7", "dashboard"),
            ("/wp-login.php", "other"),
        ] {
            assert_eq!(route(path), route_label, "{path}");
        }
    }
}
