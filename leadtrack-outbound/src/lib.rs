//! The HTTP client for every address the server calls: platforms, webhooks, chat alerts,
//! lead sources. It applies core's rule ([`leadtrack_core::target`]) twice:
//!
//! - to the URL of each request, before anything is sent ([`Outbound::request`]): the
//!   scheme, user info, an IP address written as the host, and `localhost`;
//! - to each address a name resolves to, before connecting (its resolver), so that a name
//!   that points at `127.0.0.1` or at a cloud's metadata service is refused when called,
//!   whatever it pointed at when it was saved.
//!
//! Redirects are not followed: no sink needs them, and a redirect is an address nobody
//! checked. The answer to a request that was redirected is the `3xx` itself.
//!
//! The sinks take an [`Outbound`], never a bare `reqwest::Client`, so a sink cannot be added
//! without the rule.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use leadtrack_core::target::{Refusal, Targets};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Method, RequestBuilder};

/// The longest a connection may take to open, whatever the request's own time limit.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An HTTP client that calls only the addresses its [`Targets`] allow. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Outbound {
    http: reqwest::Client,
    targets: Arc<Targets>,
}

impl Outbound {
    /// A client whose requests time out after `timeout`, resolving names with the system's
    /// resolver.
    pub fn new(targets: Targets, timeout: Duration) -> Self {
        Self::with_hosts(targets, timeout, &[])
    }

    /// A client that answers the names in `hosts` itself, as `/etc/hosts` would, and asks
    /// the system's resolver for the rest. Addresses from either are checked alike.
    pub fn with_hosts(targets: Targets, timeout: Duration, hosts: &[(&str, IpAddr)]) -> Self {
        let targets = Arc::new(targets);
        let mut table: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (name, ip) in hosts {
            table
                .entry(name.to_ascii_lowercase())
                .or_default()
                .push(*ip);
        }
        let guard = Guard {
            targets: Arc::clone(&targets),
            hosts: Arc::new(table),
        };
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(guard)
            .user_agent(concat!("leadtrack/", env!("CARGO_PKG_VERSION")))
            .build()
            // Only a TLS backend that cannot start fails here: nothing can be sent then.
            .unwrap_or_default();
        Self { http, targets }
    }

    /// The rule this client applies.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }

    /// A `method` request to `url`, once the rule allows the URL.
    pub fn request(&self, method: Method, url: &str) -> Result<RequestBuilder, Refusal> {
        let target = self.targets.check(url)?;
        Ok(self.http.request(method, target.url().clone()))
    }

    /// A `GET` of `url`, once the rule allows it.
    pub fn get(&self, url: &str) -> Result<RequestBuilder, Refusal> {
        self.request(Method::GET, url)
    }

    /// A `POST` to `url`, once the rule allows it.
    pub fn post(&self, url: &str) -> Result<RequestBuilder, Refusal> {
        self.request(Method::POST, url)
    }
}

/// The refusal that stopped a request at connect time, when that is why it failed.
pub fn refusal(err: &reqwest::Error) -> Option<&Refusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(err) = source {
        if let Some(refusal) = err.downcast_ref::<Refusal>() {
            return Some(refusal);
        }
        source = err.source();
    }
    None
}

/// Why a request failed, in words that never hold its URL (whose path or query may be a
/// secret): the rule's refusal, or the transport's error.
pub fn failure(err: reqwest::Error) -> String {
    match refusal(&err) {
        Some(refusal) => refusal.to_string(),
        None => err.without_url().to_string(),
    }
}

/// The resolver: only the addresses the rule allows are connected to; a name none of whose
/// addresses is allowed is refused, with the first refusal.
#[derive(Debug)]
struct Guard {
    targets: Arc<Targets>,
    hosts: Arc<HashMap<String, Vec<IpAddr>>>,
}

impl Resolve for Guard {
    fn resolve(&self, name: Name) -> Resolving {
        let targets = Arc::clone(&self.targets);
        let hosts = Arc::clone(&self.hosts);
        Box::pin(async move {
            let name = name.as_str().to_owned();
            let found: Vec<SocketAddr> = match hosts.get(&name.to_ascii_lowercase()) {
                Some(ips) => ips.iter().map(|ip| SocketAddr::new(*ip, 0)).collect(),
                None => tokio::net::lookup_host((name.as_str(), 0)).await?.collect(),
            };
            let mut refused = None;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| match targets.check_ip(addr.ip()) {
                    Ok(()) => true,
                    Err(refusal) => {
                        refused.get_or_insert(refusal);
                        false
                    }
                })
                .collect();
            match refused {
                Some(Refusal::Special { kind, host }) if allowed.is_empty() => {
                    let host = format!("{name}, {host}");
                    Err(Box::new(Refusal::Special { kind, host }) as Box<_>)
                }
                _ => Ok(Box::new(allowed.into_iter()) as Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests;
