//! A typed client for the leadtrack HTTP API, for backends that create, rate and read leads.
//!
//! Requests and responses are the types of [`leadtrack_core::api`], the same ones the server
//! uses. Failures are one [`Error`]: the transport failed, the API answered with an error
//! (its status and typed [`ErrorCode`]), or the answer could not be decoded.
//!
//! ```
//! use leadtrack_client::{Client, Error};
//! use leadtrack_core::ErrorCode;
//! use leadtrack_core::api::{
//!     ConversionId, CreateLeadRequest, LeadIdentifier, UpdateLeadStatusRequest, UserData,
//! };
//! use leadtrack_core::api::LeadId;
//! use leadtrack_core::request::LeadQuery;
//! # use leadtrack_core::Admin;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # // A server on a free port, as `cargo run --example server` would run it.
//! # let store = leadtrack_sqlite::SqliteStore::open_temporary().await?;
//! # let project = store.create_project(leadtrack_core::project::NewProject {
//! #     public_id: Some("prj_demo".into()), name: "Demo".into(), currency: None }, chrono::Utc::now()).await?;
//! # let api_key = store.issue_api_key(project.id, chrono::Utc::now()).await?.key;
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let base_url = format!("http://{}", listener.local_addr()?);
//! # let routes = leadtrack_warp::routes(store, Default::default());
//! # tokio::spawn(warp::serve(routes).incoming(listener).run());
//! let client = Client::new(&base_url).with_api_key(&api_key);
//!
//! // A lead from your backend (a CRM import, a phone call, ...).
//! let created = client
//!     .create_server_side_lead(&CreateLeadRequest {
//!         user_data: Some(UserData { email: Some("ada@example.com".into()), ..Default::default() }),
//!         unique_identifier: Some("crm-42".into()),
//!         ..Default::default()
//!     })
//!     .await?;
//! assert!(created.is_new());
//!
//! // Later, the sales team rates it: `lost` goes to the integrations mapped for lost leads.
//! let rated = client
//!     .update_lead_status(&UpdateLeadStatusRequest {
//!         identifier: LeadIdentifier::UniqueIdentifier("crm-42".into()),
//!         conversion_id: ConversionId::Lost,
//!         price: None,
//!         note: Some("went with a competitor".into()),
//!     })
//!     .await?;
//! assert!(rated.queued);
//!
//! let lead = client.get_lead(&LeadIdentifier::Email("ADA@example.com".into())).await?;
//! assert_eq!(lead.id, created.lead_id);
//! let page = client.get_leads(&LeadQuery { search: Some("ada".into()), ..Default::default() }).await?;
//! assert_eq!(page.total, 1);
//!
//! // Errors carry the contract's code.
//! match client.get_lead(&LeadIdentifier::LeadId(LeadId(999_999))).await {
//!     Err(Error::Api { status: 404, body, .. }) => assert_eq!(body.code, ErrorCode::LeadNotFound),
//!     other => panic!("unexpected: {other:?}"),
//! }
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;

use leadtrack_core::ErrorCode;
use leadtrack_core::api::{
    CreateLeadRequest, CreateLeadResponse, ErrorBody, GetLeadActivityResponse, GetLeadJobsResponse,
    GetLeadResponse, GetLeadsResponse, Lead, LeadIdentifier, UpdateLeadStatusRequest,
    UpdateLeadStatusResponse,
};
use leadtrack_core::request::LeadQuery;
use leadtrack_core::roas::{GetRoasResponse, RoasQuery};
use leadtrack_core::time::parse_retry_after;
use reqwest::header::RETRY_AFTER;
use serde::de::DeserializeOwned;

/// What a call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request did not complete (connection, timeout, TLS, ...).
    #[error("request failed: {0}")]
    Http(#[from] reqwest::Error),
    /// The API answered with an error.
    #[error("API error {status} {}: {}", body.code, body.message)]
    Api {
        /// The HTTP status.
        status: u16,
        /// The error body: `code` (typed), `message`, and `errors` or `leadId` when given.
        body: ErrorBody,
        /// The `Retry-After` of a 429 or 503.
        retry_after: Option<Duration>,
    },
    /// The answer was not what the contract says; its text is kept.
    #[error("undecodable response (status {status}): {source}")]
    Decode {
        /// The HTTP status.
        status: u16,
        /// Why it could not be decoded.
        source: serde_json::Error,
        /// The body as received (lossily decoded as UTF-8).
        body: String,
    },
}

impl Error {
    /// The contract's code, for API errors.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Api { body, .. } => Some(body.code),
            _ => None,
        }
    }
}

/// A leadtrack API client. Cheap to clone: clones share the connection pool.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    base_url: Arc<str>,
    api_key: Option<Arc<str>>,
}

impl Client {
    /// A client for the server at `base_url` (e.g. `https://leads.example.com`), without a key.
    pub fn new(base_url: impl AsRef<str>) -> Self {
        Self {
            http: reqwest::Client::new(),
            base_url: base_url.as_ref().trim_end_matches('/').into(),
            api_key: None,
        }
    }

    /// Sends `key` as `X-API-Key` (needed by every operation but [`Client::create_lead`]).
    pub fn with_api_key(mut self, key: impl AsRef<str>) -> Self {
        self.api_key = Some(key.as_ref().into());
        self
    }

    /// Uses a configured `reqwest` client (timeouts, proxies, TLS settings).
    pub fn with_http_client(mut self, http: reqwest::Client) -> Self {
        self.http = http;
        self
    }

    /// `POST /api/leads/createLead`: a lead as a browser sends it (no key; `project_id`
    /// required).
    pub async fn create_lead(&self, lead: &CreateLeadRequest) -> Result<CreateLeadResponse, Error> {
        self.send(self.post("/api/leads/createLead").json(lead))
            .await
    }

    /// `POST /api/leads/createServerSideLead`: a lead from a backend (`user_data` required).
    pub async fn create_server_side_lead(
        &self,
        lead: &CreateLeadRequest,
    ) -> Result<CreateLeadResponse, Error> {
        self.send(self.post("/api/leads/createServerSideLead").json(lead))
            .await
    }

    /// `POST /api/leads/updateLeadStatus`: `open`, `lost` or a conversion label.
    pub async fn update_lead_status(
        &self,
        update: &UpdateLeadStatusRequest,
    ) -> Result<UpdateLeadStatusResponse, Error> {
        self.send(self.post("/api/leads/updateLeadStatus").json(update))
            .await
    }

    /// `GET /api/leads/getLeads`: one page of leads matching `query`.
    pub async fn get_leads(&self, query: &LeadQuery) -> Result<GetLeadsResponse, Error> {
        self.send(self.get("/api/leads/getLeads").query(&query.to_pairs()))
            .await
    }

    /// `GET /api/leads/getLead`: one lead.
    pub async fn get_lead(&self, identifier: &LeadIdentifier) -> Result<Lead, Error> {
        let query = [(identifier.name(), identifier.value())];
        let response: GetLeadResponse = self
            .send(self.get("/api/leads/getLead").query(&query))
            .await?;
        Ok(response.lead)
    }

    /// `GET /api/leads/getLeadJobs`: what became of a lead's conversions (jobs, deliveries,
    /// every attempt).
    pub async fn get_lead_jobs(
        &self,
        identifier: &LeadIdentifier,
    ) -> Result<GetLeadJobsResponse, Error> {
        let query = [(identifier.name(), identifier.value())];
        self.send(self.get("/api/leads/getLeadJobs").query(&query))
            .await
    }

    /// `GET /api/leads/getLeadActivity`: everything that happened to a lead (created,
    /// merged, rated, reopened, each delivery attempt), oldest first, with who did it.
    pub async fn get_lead_activity(
        &self,
        identifier: &LeadIdentifier,
    ) -> Result<GetLeadActivityResponse, Error> {
        let query = [(identifier.name(), identifier.value())];
        self.send(self.get("/api/leads/getLeadActivity").query(&query))
            .await
    }

    /// `GET /api/reports/roas` (an addition to the contract): what the project's ad spend
    /// bought over `query`'s days, by source, campaign or label.
    pub async fn get_roas(&self, query: &RoasQuery) -> Result<GetRoasResponse, Error> {
        let pairs = [
            ("from", query.from.to_string()),
            ("to", query.to.to_string()),
            ("groupBy", query.by.to_string()),
            ("touch", query.touch.to_string()),
        ];
        self.send(self.get("/api/reports/roas").query(&pairs)).await
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.authorized(self.http.post(format!("{}{path}", self.base_url)))
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.authorized(self.http.get(format!("{}{path}", self.base_url)))
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => request.header("X-API-Key", key.as_ref()),
            None => request,
        }
    }

    /// Sends a request and decodes a success body as `T`, an error body as [`Error::Api`].
    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, Error> {
        let response = request.send().await?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, chrono::Utc::now()));
        let bytes = response.bytes().await?;
        let decode_error = |source| Error::Decode {
            status,
            source,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        };
        if (200..300).contains(&status) {
            serde_json::from_slice(&bytes).map_err(decode_error)
        } else {
            let body: ErrorBody = serde_json::from_slice(&bytes).map_err(decode_error)?;
            Err(Error::Api {
                status,
                body,
                retry_after,
            })
        }
    }
}
