//! Closed-loop HTTP load: `connections` keep-alive HTTP/1.1 connections, each sending its
//! next request as soon as the last is answered, for a time or until a number of requests
//! is reached. Every latency goes into a histogram.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpSocket, TcpStream};

/// One request to send: method, path and query, headers, body.
pub(crate) struct Call {
    /// `GET` or `POST`.
    pub(crate) method: &'static str,
    /// The path and query.
    pub(crate) path: String,
    /// Extra headers.
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The body (`POST`s are JSON).
    pub(crate) body: Option<Vec<u8>>,
}

/// When a run stops.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Until {
    /// After this long.
    Elapsed(Duration),
    /// Once this many requests have been sent.
    Count(u64),
}

/// What a run measured.
pub(crate) struct Stats {
    /// Requests answered with the expected status.
    pub(crate) ok: u64,
    /// Requests the server refused for overload (503 or 429), as it is meant to under
    /// more load than it can serve.
    pub(crate) shed: u64,
    /// Requests answered otherwise, or not at all.
    pub(crate) errors: u64,
    /// The first unexpected answer, for the report.
    pub(crate) first_error: Option<String>,
    /// How long the run took.
    pub(crate) elapsed: Duration,
    /// Latencies of the answered requests, in microseconds.
    pub(crate) latency: Histogram<u64>,
}

impl Stats {
    /// Nothing measured yet.
    fn empty() -> Self {
        Self {
            ok: 0,
            shed: 0,
            errors: 0,
            first_error: None,
            elapsed: Duration::ZERO,
            latency: histogram(),
        }
    }

    /// Answered requests per second.
    pub(crate) fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }

    /// The share of requests shed for overload.
    pub(crate) fn shed_share(&self) -> f64 {
        self.shed as f64 / (self.ok + self.shed + self.errors).max(1) as f64
    }

    /// A latency percentile, in milliseconds.
    pub(crate) fn ms(&self, percentile: f64) -> f64 {
        self.latency.value_at_quantile(percentile / 100.0) as f64 / 1000.0
    }
}

/// Builds the request numbered `n` (from 0, across all connections).
pub(crate) type MakeCall = Arc<dyn Fn(u64) -> Call + Send + Sync>;

/// Sees the body of the answer to request `n`.
pub(crate) type Inspect = Arc<dyn Fn(u64, &[u8]) + Send + Sync>;

/// Runs the load: `connections` connections to `addr`, requests from `make`, each expected
/// to answer `expect`.
pub(crate) async fn run(
    addr: SocketAddr,
    connections: usize,
    until: Until,
    expect: u16,
    make: MakeCall,
    inspect: Option<Inspect>,
) -> Stats {
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = match until {
        Until::Elapsed(time) => Some(started + time),
        Until::Count(_) => None,
    };
    let limit = match until {
        Until::Count(count) => count,
        Until::Elapsed(_) => u64::MAX,
    };
    let tasks: Vec<_> = (0..connections)
        .map(|index| {
            let (next, make, inspect) = (Arc::clone(&next), Arc::clone(&make), inspect.clone());
            let route = (visitor(index), addr);
            tokio::spawn(connection(
                route, deadline, limit, expect, next, make, inspect,
            ))
        })
        .collect();
    let mut total = Stats::empty();
    for task in tasks {
        match task.await {
            Ok(stats) => {
                total.ok += stats.ok;
                total.shed += stats.shed;
                total.errors += stats.errors;
                total.first_error = total.first_error.or(stats.first_error);
                // Both histograms have the same bounds, so adding cannot fail.
                let _ = total.latency.add(&stats.latency);
            }
            Err(err) => {
                total.errors += 1;
                total.first_error.get_or_insert_with(|| err.to_string());
            }
        }
    }
    total.elapsed = started.elapsed();
    total
}

fn histogram() -> Histogram<u64> {
    // 1 µs to 100 s, three significant digits.
    Histogram::new_with_bounds(1, 100_000_000, 3).unwrap_or_else(|_| unreachable!("valid bounds"))
}

/// One connection's loop; reconnects when the server closes the connection.
/// Opens `count` connections from `127.0.0.2`, each a createLead whose body never comes,
/// and keeps those the server keeps: one client trying to hold the server's connections
/// while the load is measured. Dropping them closes them.
pub(crate) async fn hog(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    let head = format!(
        "POST /api/leads/createLead HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{{"
    );
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let Ok(socket) = TcpSocket::new_v4() else {
            break;
        };
        let from = SocketAddr::from(([127, 0, 0, 2], 0));
        if socket.bind(from).is_err() {
            break;
        }
        let Ok(mut stream) = socket.connect(addr).await else {
            continue;
        };
        let sent = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
        if sent.is_ok() {
            held.push(stream);
        }
    }
    held
}

/// The loopback address connection `index` comes from: the load stands for many visitors,
/// a few connections each (127.0.0.10 to 127.0.0.249), as the server's share per address
/// expects.
pub(crate) fn visitor(index: usize) -> IpAddr {
    let host = 10 + u8::try_from(index % 240).unwrap_or(0);
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, host))
}

async fn connection(
    (from, addr): (IpAddr, SocketAddr),
    deadline: Option<Instant>,
    limit: u64,
    expect: u16,
    next: Arc<AtomicU64>,
    make: MakeCall,
    inspect: Option<Inspect>,
) -> Stats {
    let mut stats = Stats::empty();
    let mut sender = None;
    let fail = |stats: &mut Stats, error: String| {
        stats.errors += 1;
        stats.first_error.get_or_insert(error);
    };
    loop {
        if deadline.is_some_and(|at| Instant::now() >= at) {
            break;
        }
        let n = next.fetch_add(1, Ordering::Relaxed);
        if n >= limit {
            break;
        }
        if sender.is_none() {
            match connect(from, addr).await {
                Ok(connected) => sender = Some(connected),
                Err(error) => {
                    fail(&mut stats, error);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let Some(send) = sender.as_mut() else {
            continue;
        };
        let call = make(n);
        let mut request = Request::builder()
            .method(call.method)
            .uri(call.path)
            .header("host", addr.to_string());
        if call.body.is_some() {
            request = request.header("content-type", "application/json");
        }
        for (name, value) in call.headers {
            request = request.header(name, value);
        }
        let Ok(request) = request.body(Full::new(Bytes::from(call.body.unwrap_or_default())))
        else {
            fail(&mut stats, "a request could not be built".to_owned());
            continue;
        };
        let sent = Instant::now();
        let answer = async {
            let response = send
                .send_request(request)
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            Ok::<_, String>((status, body))
        }
        .await;
        match answer {
            Ok((status, body)) if status == expect => {
                let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
                let _ = stats.latency.record(micros.max(1));
                stats.ok += 1;
                if let Some(inspect) = &inspect {
                    inspect(n, &body);
                }
            }
            Ok((503 | 429, _)) => stats.shed += 1,
            Ok((status, body)) => fail(
                &mut stats,
                format!("HTTP {status}: {}", String::from_utf8_lossy(&body)),
            ),
            Err(error) => {
                fail(&mut stats, error);
                sender = None;
            }
        }
    }
    stats
}

type Sender = http1::SendRequest<Full<Bytes>>;

async fn connect(from: IpAddr, addr: SocketAddr) -> Result<Sender, String> {
    let socket = TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket
        .bind(SocketAddr::new(from, 0))
        .map_err(|e| e.to_string())?;
    let stream = socket.connect(addr).await.map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}
