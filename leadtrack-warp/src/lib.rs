//! The leadtrack lead routes as one warp [`Filter`], to mount inside any warp app.
//!
//! [`routes`] serves the seven paths of the HTTP contract under `/api/leads/` (its first
//! five, and `getLeadJobs` and `getLeadActivity`, which show what became of a lead's
//! conversions and everything that happened to it), the report of spend against leads
//! (`/api/reports/roas`), a person's data, erased or exported (`/api/privacy/`), and the
//! REST hooks automation tools subscribe with (`/api/hooks`), generic over any
//! [`LeadStore`] that is also [`LeadWebhooks`] and [`Spending`], each declared once in a
//! route table. It claims a request only
//! when its path is one of those; everything else is rejected untouched, so the host's own
//! routes and its 404 keep working. Once a path is claimed, every outcome (errors, 405, CORS
//! preflight) is answered by leadtrack itself: the host needs no `.recover()`.
//!
//! ```no_run
//! use leadtrack_sqlite::SqliteStore;
//! use warp::Filter;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = SqliteStore::open("leadtrack.db").await?;
//! let health = warp::path!("health").map(|| "ok");
//! let app = health.or(leadtrack_warp::routes(store, leadtrack_warp::Config::default()));
//! warp::serve(app).run(([127, 0, 0, 1], 8080)).await;
//! # Ok(())
//! # }
//! ```
//!
//! | Route | Answers |
//! |---|---|
//! | `POST /api/leads/createLead` | 201 created, 200 deduplicated; no key |
//! | `POST /api/leads/createServerSideLead` | the same, with `X-API-Key` |
//! | `POST /api/leads/updateLeadStatus` | 200 `open`, 201 queued, 409 job pending |
//! | `GET /api/leads/getLeads` | 200 with a page of leads |
//! | `GET /api/leads/getLead` | 200 with one lead |
//! | `GET /api/leads/getLeadJobs` | 200 with the lead's conversion jobs, deliveries and attempts |
//! | `GET /api/leads/getLeadActivity` | 200 with the lead's history, oldest first |
//! | `GET /api/reports/roas` | 200 with what each source, campaign or label cost and returned |
//! | `POST /api/privacy/erase` | 200 with the person's leads erased and what platforms kept |
//! | `GET /api/privacy/export` | 200 with everything kept about a person, as one document |
//! | `POST /api/hooks` | 201 with a REST hook subscribed to one event |
//! | `GET /api/hooks` | 200 with the key's project's REST hooks |
//! | `DELETE /api/hooks/{id}` | 204, the hook unsubscribed |
//! | `GET /api/hooks/sample` | 200 with a list of one sample payload of an event |
//!
//! Errors carry `{"message", "code"}` with the codes of [`leadtrack_core::ErrorCode`]. The
//! routes are described for tools by an OpenAPI 3.1 document, [`OPENAPI`], which
//! [`openapi`](fn@openapi) serves at `GET /api/openapi.json`; [`script`](fn@script)
//! serves the capture script websites include. Nothing here accepts connections: the
//! standalone server (`leadtrack-server`) serves these filters with its own listener.
//!
//! `createLead` needs no key, so it is rate-limited per client address and per project, and
//! the keyed routes per API key ([`RateLimits`], `429 rate_limited` with `Retry-After`); it
//! refuses browsers from origins a project does not list (`403 origin_not_allowed`), merges
//! only into leads it created itself, and answers only the `uniqueIdentifier` it was sent.

#![forbid(unsafe_code)]

mod handlers;
mod hooks;
mod openapi;
mod rate;
mod reply;
mod request;
mod script;

use std::sync::{Arc, LazyLock};

use leadtrack_core::target::Targets;
use leadtrack_core::{LeadStore, LeadWebhooks, Spending};
use leadtrack_http::{Request, Router};
use strum::{IntoStaticStr, VariantArray};
use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Rejection};

pub use openapi::{OPENAPI, openapi};
pub use rate::{RateLimit, RateLimits};
pub use script::{SCRIPT, script};

/// Settings of the lead routes.
#[derive(Clone, Debug)]
pub struct Config {
    /// Largest accepted request body, in bytes (`413` beyond it). 64 KiB by default.
    pub body_limit: usize,
    /// Take the client's address from the first `X-Forwarded-For` address. Only enable it
    /// behind a proxy that sets the header, or clients can claim any address. Off by default.
    pub trust_forwarded_for: bool,
    /// Which origins browsers may call the routes from. Any by default: websites post
    /// leads from anywhere.
    pub cors_origins: CorsOrigins,
    /// Token buckets per client address and project (createLead) and per API key (the
    /// keyed routes); past one, `429 rate_limited`. See [`RateLimits::default`].
    pub rate_limits: RateLimits,
    /// The addresses REST hooks may post to: the server's one rule for outbound
    /// addresses, `https://` to public hosts by default.
    pub targets: Targets,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            body_limit: 64 * 1024,
            trust_forwarded_for: false,
            cors_origins: CorsOrigins::Any,
            rate_limits: RateLimits::default(),
            targets: Targets::default(),
        }
    }
}

/// The origins allowed by CORS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsOrigins {
    /// `Access-Control-Allow-Origin: *`.
    Any,
    /// Only these origins (e.g. `https://www.example.com`), echoed back with `Vary: Origin`.
    List(Vec<String>),
}

/// The operations: the contract's five, `getLeadJobs`, `getLeadActivity`, the report of
/// spend against leads, a person's data and the REST hooks.
///
/// Each is named in its path as written here (`createLead`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "camelCase")]
enum Operation {
    CreateLead,
    CreateServerSideLead,
    UpdateLeadStatus,
    GetLeads,
    GetLead,
    GetLeadJobs,
    GetLeadActivity,
    /// `GET /api/reports/roas`, an addition: what each source, campaign or label cost and
    /// returned.
    GetRoas,
    /// `POST /api/privacy/erase`, an addition: a person's leads erased at their request.
    ErasePerson,
    /// `GET /api/privacy/export`, an addition: everything kept about a person.
    ExportPerson,
    /// `POST /api/hooks`, an addition: a REST hook subscribed.
    CreateHook,
    /// `GET /api/hooks`, an addition: the project's REST hooks.
    ListHooks,
    /// `DELETE /api/hooks/{id}`, an addition: a REST hook unsubscribed.
    DeleteHook,
    /// `GET /api/hooks/sample`, an addition: a sample payload of an event.
    GetHookSample,
}

impl Operation {
    /// The last segment of the operation's path.
    fn segment(self) -> &'static str {
        self.into()
    }
}

/// The lead API's routes, declared once: the dispatch, the `405` answers and their `Allow`,
/// the paths the filter claims, the metrics' labels and the OpenAPI document's tests all
/// read this table.
static ROUTES: LazyLock<Router<Operation>> = LazyLock::new(|| {
    Router::new(
        [
            (Method::POST, "/api/leads/createLead", Operation::CreateLead),
            (
                Method::POST,
                "/api/leads/createServerSideLead",
                Operation::CreateServerSideLead,
            ),
            (
                Method::POST,
                "/api/leads/updateLeadStatus",
                Operation::UpdateLeadStatus,
            ),
            (Method::GET, "/api/leads/getLeads", Operation::GetLeads),
            (Method::GET, "/api/leads/getLead", Operation::GetLead),
            (
                Method::GET,
                "/api/leads/getLeadJobs",
                Operation::GetLeadJobs,
            ),
            (
                Method::GET,
                "/api/leads/getLeadActivity",
                Operation::GetLeadActivity,
            ),
            (Method::GET, "/api/reports/roas", Operation::GetRoas),
            (Method::POST, "/api/privacy/erase", Operation::ErasePerson),
            (Method::GET, "/api/privacy/export", Operation::ExportPerson),
            (Method::POST, "/api/hooks", Operation::CreateHook),
            (Method::GET, "/api/hooks", Operation::ListHooks),
            (Method::DELETE, "/api/hooks/{id}", Operation::DeleteHook),
            (Method::GET, "/api/hooks/sample", Operation::GetHookSample),
        ],
        false,
    )
});

/// The name of the operation at `path` (`createLead`, ...), if it is one of the routes'
/// paths: a bounded label for logs and metrics.
pub fn operation_at(path: &str) -> Option<&'static str> {
    ROUTES.route_at(path).map(Operation::segment)
}

/// The lead routes, answered from `store`.
///
/// Combine with a host app's filters by `.or(...)`. Requests to other paths are rejected
/// with warp's "not found", which lets the host's routes (and its own 404) answer them.
pub fn routes<S: LeadStore + LeadWebhooks + Spending>(
    store: S,
    config: Config,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {
    let limiters = rate::Limiters::new(&config.rate_limits);
    let api = Arc::new(request::Api {
        store,
        config,
        limiters,
    });
    leadtrack_http::claimed(|path| ROUTES.has_path(path)).then(move |request: Request, body| {
        let api = Arc::clone(&api);
        async move {
            let found = ROUTES.find(&request.method, &request.path);
            handlers::handle(&api, found, &request, body).await
        }
    })
}
