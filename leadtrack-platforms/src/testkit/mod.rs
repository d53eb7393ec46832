//! Local stand-ins for the ad platforms (feature `testkit`): an HTTP server on a free
//! loopback port that records every request and answers as a test scripts it.

pub mod crm;
pub mod reports;
pub mod rules;
pub mod sign_in;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leadtrack_core::types::IntegrationKind;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use warp::Filter;
use warp::http::{HeaderMap, Method, Response, StatusCode};

/// A request the mock received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `POST`, ...
    pub method: String,
    /// The path, e.g. `/mp/collect`.
    pub path: String,
    /// Decoded query parameters.
    pub query: Vec<(String, String)>,
    /// Headers, names lowercased.
    pub headers: HashMap<String, String>,
    /// The raw body.
    pub body: Vec<u8>,
    /// When it arrived.
    pub received: Instant,
}

impl Recorded {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as a form (`application/x-www-form-urlencoded`), its fields sorted by name:
    /// the order of a form's fields carries no meaning.
    pub fn form(&self) -> Vec<(String, String)> {
        let mut fields: Vec<_> = form_urlencoded::parse(&self.body).into_owned().collect();
        fields.sort();
        fields
    }

    /// A query parameter.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// A header (by its name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// Asserts that this webhook post carries the signature a receiver holding `secret`
    /// computes over the raw body ([`crate::webhook::signature`]); returns its timestamp.
    #[track_caller]
    pub fn assert_signed(&self, secret: &str) -> i64 {
        let signature = self
            .header(crate::webhook::SIGNATURE_HEADER)
            .expect("a signature header");
        let timestamp: i64 = signature
            .strip_prefix("t=")
            .and_then(|rest| rest.split(',').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no timestamp in {signature:?}"));
        assert_eq!(
            signature,
            crate::webhook::signature(secret, timestamp, &self.body),
            "the receiver can verify it"
        );
        timestamp
    }
}

/// An answer the mock gives.
#[derive(Clone, Debug)]
pub struct MockResponse {
    /// The status.
    pub status: u16,
    /// The body.
    pub body: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// How long to wait before answering.
    pub delay: Duration,
}

impl MockResponse {
    /// A JSON answer.
    pub fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            body: body.to_string(),
            headers: vec![("content-type".into(), "application/json".into())],
            delay: Duration::ZERO,
        }
    }

    /// What `kind`'s platform answers when it took one event, as its documentation shows
    /// it.
    pub fn took_one(kind: IntegrationKind) -> Self {
        let body = match kind {
            IntegrationKind::Ga4 => return Self::empty(204),
            IntegrationKind::GoogleAds => json!({"requestId": "req-1"}),
            IntegrationKind::Meta => {
                json!({"events_received": 1, "messages": [], "fbtrace_id": "trace"})
            }
            IntegrationKind::MicrosoftAds => json!({"PartialErrors": []}),
            IntegrationKind::Linkedin => json!({"elements": [{"status": 201}]}),
            IntegrationKind::Tiktok => {
                json!({"code": 0, "message": "OK", "request_id": "202611291200", "data": {}})
            }
            IntegrationKind::Reddit => {
                json!({"data": {"message": "Successfully processed 1 conversion events."}})
            }
            IntegrationKind::Pinterest => json!({
                "num_events_received": 1, "num_events_processed": 1,
                "events": [{"status": "processed", "error_message": null, "warning_message": null}],
            }),
            IntegrationKind::Snapchat => json!({"status": "SUCCESS"}),
            IntegrationKind::Webhook => json!({"ok": true}),
        };
        Self::json(200, body)
    }

    /// An answer without a body.
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            body: String::new(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// The same answer with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same answer, given after `delay`.
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A platform's rules as a mock checks them: the answer to a request that breaks one (or
/// that the rules answer otherwise), `None` for the scripted or default answer.
pub type Rules = Arc<dyn Fn(&Recorded) -> Option<MockResponse> + Send + Sync>;

struct State {
    requests: Vec<Recorded>,
    scripted: VecDeque<MockResponse>,
    default: MockResponse,
    rules: Option<Rules>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("requests", &self.requests.len())
            .field("scripted", &self.scripted)
            .field("default", &self.default)
            .finish_non_exhaustive()
    }
}

/// Serves `routes` on a free loopback port until the sender returned is dropped; the
/// server's `http://127.0.0.1:PORT`.
pub(crate) async fn serve<F>(routes: F) -> (String, oneshot::Sender<()>)
where
    F: Filter + Clone + Send + Sync + 'static,
    F::Extract: warp::Reply,
{
    serve_on("127.0.0.1", routes).await
}

/// Serves `routes` on a free port of the loopback address `ip` (`127.0.0.2`), as
/// [`serve`] does.
async fn serve_on<F>(ip: &str, routes: F) -> (String, oneshot::Sender<()>)
where
    F: Filter + Clone + Send + Sync + 'static,
    F::Extract: warp::Reply,
{
    let listener = TcpListener::bind((ip, 0))
        .await
        .expect("a free loopback port for the mock");
    let url = format!("http://{}", listener.local_addr().expect("mock address"));
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(
        warp::serve(routes)
            .incoming(listener)
            .graceful(async {
                let _ = stopped.await;
            })
            .run(),
    );
    (url, stop)
}

/// A mock platform: records requests; answers each with the next scripted response, or
/// the default one.
#[derive(Debug)]
pub struct MockPlatform {
    url: String,
    state: Arc<Mutex<State>>,
    _stop: oneshot::Sender<()>,
}

impl MockPlatform {
    /// Starts a mock on a free loopback port; it stops when dropped.
    pub async fn start(default: MockResponse) -> Self {
        Self::start_on("127.0.0.1", default).await
    }

    /// Starts a mock on a free port of the loopback address `ip` (`127.0.0.2`), for a
    /// test that allows some loopback addresses and not others.
    pub async fn start_on(ip: &str, default: MockResponse) -> Self {
        let state = Arc::new(Mutex::new(State {
            requests: Vec::new(),
            scripted: VecDeque::new(),
            default,
            rules: None,
        }));
        let shared = Arc::clone(&state);
        let query =
            warp::query::raw().or_else(|_| async { Ok::<_, warp::Rejection>((String::new(),)) });
        let routes = warp::method()
            .and(warp::path::full())
            .and(query)
            .and(warp::header::headers_cloned())
            .and(warp::body::bytes())
            .then(
                move |method: Method,
                      path: warp::path::FullPath,
                      query: String,
                      headers: HeaderMap,
                      body: bytes::Bytes| {
                    let state = Arc::clone(&shared);
                    async move {
                        let response = {
                            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                            let recorded = Recorded {
                                method: method.to_string(),
                                path: path.as_str().to_owned(),
                                query: form_urlencoded::parse(query.as_bytes())
                                    .into_owned()
                                    .collect(),
                                headers: headers
                                    .iter()
                                    .map(|(k, v)| {
                                        (
                                            k.as_str().to_owned(),
                                            v.to_str().unwrap_or_default().to_owned(),
                                        )
                                    })
                                    .collect(),
                                body: body.to_vec(),
                                received: Instant::now(),
                            };
                            let ruled = state.rules.as_ref().and_then(|rules| rules(&recorded));
                            state.requests.push(recorded);
                            ruled.unwrap_or_else(|| {
                                state
                                    .scripted
                                    .pop_front()
                                    .unwrap_or_else(|| state.default.clone())
                            })
                        };
                        tokio::time::sleep(response.delay).await;
                        let mut builder = Response::builder().status(
                            StatusCode::from_u16(response.status)
                                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                        );
                        for (name, value) in &response.headers {
                            builder = builder.header(name.as_str(), value.as_str());
                        }
                        builder
                            .body(response.body)
                            .unwrap_or_else(|_| Response::new(String::new()))
                    }
                },
            );
        let (url, stop) = serve_on(ip, routes).await;
        Self {
            url,
            state,
            _stop: stop,
        }
    }

    /// `http://127.0.0.1:PORT`, or the address it was started on.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Answers the next request (after those already scripted) with `response`.
    pub fn push(&self, response: MockResponse) {
        self.lock().scripted.push_back(response);
    }

    /// Checks every request by `rules` from now on: their answer, when they give one, comes
    /// before the scripted and default ones.
    pub fn check(&self, rules: Rules) {
        self.lock().rules = Some(rules);
    }

    /// Changes the answer to requests nothing is scripted for.
    pub fn set_default(&self, response: MockResponse) {
        self.lock().default = response;
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// Waits until at least `count` requests arrived (or `timeout` passed) and returns them.
    pub async fn wait_for(&self, count: usize, timeout: Duration) -> Vec<Recorded> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= count || Instant::now() >= deadline {
                return requests;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
