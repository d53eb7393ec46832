//! The requests a web crate claims: decided by path first, so that a host app's routes and
//! its own 404 keep every other path, then read into a [`Request`] and its [`Body`].

use std::net::SocketAddr;

use warp::http::{HeaderMap, Method};
use warp::path::FullPath;
use warp::{Filter, Rejection};

use crate::Body;

/// What a route needs of a request besides its body.
#[derive(Debug)]
pub struct Request {
    /// Its method.
    pub method: Method,
    /// Its path, without the query.
    pub path: String,
    /// Its query string, without the `?` (empty when there is none).
    pub query: String,
    /// Its headers.
    pub headers: HeaderMap,
    /// The client's address, as the server saw it ([`crate::remote`]).
    pub remote: Option<SocketAddr>,
}

impl Request {
    /// The first value of a query parameter, trimmed, unless it is blank.
    pub fn param(&self, name: &str) -> Option<String> {
        query_param(&self.query, name)
    }
}

/// The first value of parameter `name` in the query string `query`, trimmed, unless it is
/// blank.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// The requests whose path `claims` says are ours, with their body. Any other request is
/// rejected untouched (warp's "not found"), for the host's routes to answer.
pub fn claimed(
    claims: fn(&str) -> bool,
) -> impl Filter<Extract = (Request, Body), Error = Rejection> + Clone + Send + Sync + 'static {
    let query = warp::query::raw().or_else(|_| async { Ok::<_, Rejection>((String::new(),)) });
    warp::path::full()
        .and_then(move |path: FullPath| async move {
            if claims(path.as_str()) {
                Ok(path.as_str().to_owned())
            } else {
                Err(warp::reject::not_found())
            }
        })
        .and(warp::method())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(crate::remote())
        .map(|path, method, query, headers, remote| Request {
            method,
            path,
            query,
            headers,
            remote,
        })
        .and(crate::body())
}
