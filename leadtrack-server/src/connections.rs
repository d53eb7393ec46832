//! The standalone server's connections: the accept loop, the timeouts that close slow and
//! idle connections, the cap on how many are open at once, and each client address's share
//! of them.
//!
//! warp's own server sets no timer, so a client that opens a socket and sends nothing (or a
//! header a byte at a time) keeps it, and a file descriptor, forever. The filter is served
//! here through hyper-util's builder instead, with a timer and a watchdog per connection.

use std::collections::HashMap;
use std::future::Future;
use std::io::IoSlice;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};
use tower_http::compression::Compression;
use tracing::Instrument;
use uuid::Uuid;
use warp::http::Request;
use warp::http::header::{HeaderMap, HeaderName, HeaderValue};

use leadtrack_http::PeerAddr;

use crate::{App, header_limits, http_errors};

/// How the standalone server treats connections: its timeouts and its connection cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    /// How long a client has to send a request's line and headers, counted from when the
    /// server starts waiting for them: from the connection's start for its first request,
    /// and from the end of the previous response on a keep-alive connection, which is
    /// therefore closed after this long without a new request.
    pub header_read_timeout: Duration,
    /// How long a client has to send a request's body, counted from the end of its headers.
    pub body_read_timeout: Duration,
    /// How long a connection stays open with no request in flight and no byte moving
    /// either way (say, a response the client stopped reading, or an HTTP/2 connection).
    pub idle_timeout: Duration,
    /// The most connections open at once. A new connection past it closes a connection of
    /// the address holding the most (its idlest, else its newest), never another address's;
    /// the server never stops accepting.
    pub max_connections: usize,
    /// The most connections one client address (an IPv6 client by its /64) keeps open
    /// while some of them are unused: its new connection past it closes its own that have
    /// been quiet for a second, oldest first. Its busy and recently active connections are
    /// never closed for it (the new one is served too, up to `max_connections`), so no
    /// request in flight or about to be sent is lost. 0: no share, for a server behind a
    /// proxy, where every connection comes from the proxy's address.
    pub max_connections_per_address: usize,
}

impl Default for ServeOptions {
    /// 10 s for headers, 30 s for a body, 60 s idle, 512 connections (half of a common
    /// limit of 1,024 open files, leaving the rest to the database and outgoing calls), 64
    /// of them per address (a browser opens 6 per site; an office behind one address, a
    /// few dozen).
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
            max_connections_per_address: 64,
        }
    }
}

/// [`crate::serve_app`] with `options`: the header, body and idle timeouts and the
/// connection cap. Serves `app` on `listener` until `shutdown` resolves, then lets requests
/// in flight finish.
///
/// Requests hyper cannot parse (a request line that is not HTTP, a URL over 64 KiB, header
/// fields far past the limits) and requests over the header limits (more than 100 fields
/// or 400 KiB of them) are answered before any route with `400 bad_request`,
/// `414 uri_too_long` or `431 headers_too_large`, the contract's JSON error body and
/// `Access-Control-Allow-Origin: *`. They, timeouts and clients that disconnect are logged
/// at `debug`; other connection errors at `warn`.
pub async fn serve_app_with(
    listener: TcpListener,
    app: impl App,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper's header limits sit above ours, which header_limits answers with the contract's
    // 431: hyper refuses by itself only what is far past them.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout)
        .max_headers(header_limits::HYPER_MAX_FIELDS)
        .max_buf_size(header_limits::HYPER_MAX_BUFFER);
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let registry = Arc::new(Registry::default());
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) if is_connection_error(&err) => continue,
            Err(err) => {
                // Out of file descriptors, most likely: make room rather than wait for it.
                tracing::warn!(%err, "cannot accept a connection; closing the longest idle");
                let pause = if registry.evict_idlest() { 10 } else { 250 };
                tokio::time::sleep(Duration::from_millis(pause)).await;
                continue;
            }
        };
        let Some(conn) = registry.admit(peer.ip(), &options) else {
            tracing::debug!(%peer, "connection refused: its address's connections are busy");
            drop(stream);
            continue;
        };
        let task = Connection {
            conn,
            registry: Arc::clone(&registry),
            options,
        };
        // Responses are gzipped for clients that accept it (listings, the capture script,
        // the dashboard's pages), unless they are tiny or already compressed.
        let service = Compression::new(warp::service(header_limits::guard(app.clone())));
        let builder = Arc::clone(&builder);
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let conn = Arc::clone(&task.conn);
            let io = TokioIo::new(Tracked::new(stream, Arc::clone(&conn)));
            let hyper_service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let mut service = service.clone();
                let busy = Busy::start(Arc::clone(&conn));
                let deadline = Box::pin(tokio::time::sleep(options.body_read_timeout));
                let mut request = request.map(|body| TimedBody::new(body, deadline, &conn));
                request.extensions_mut().insert(PeerAddr(peer));
                header_limits::check(&mut request);
                let id = request_id(request.headers_mut());
                let span = tracing::info_span!(
                    "request",
                    id = id.to_str().unwrap_or_default(),
                    project = tracing::field::Empty
                );
                async move {
                    let mut response = tower_service::Service::call(&mut service, request)
                        .instrument(span)
                        .await;
                    drop(busy);
                    if let Ok(response) = &mut response {
                        response.headers_mut().insert(REQUEST_ID, id);
                    }
                    response
                }
            });
            let served = watcher.watch(builder.serve_connection(io, hyper_service));
            tokio::select! {
                result = served => {
                    if let Err(err) = result {
                        log_connection_error(peer, &*err);
                    }
                }
                reason = task.watchdog() => {
                    tracing::debug!(%peer, reason, "connection closed");
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The header carrying a request's id, in both directions.
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The request's id: the client's `X-Request-Id` when it is a plausible id (1 to 128 of
/// letters, digits and `-_.:/+=@`), else a new UUID, which replaces it. Every log line of
/// the request carries it, and the response returns it.
fn request_id(headers: &mut HeaderMap) -> HeaderValue {
    let plausible = |value: &HeaderValue| {
        (1..=128).contains(&value.len())
            && value
                .as_bytes()
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=@".contains(b))
    };
    match headers.get(&REQUEST_ID) {
        Some(value) if plausible(value) => value.clone(),
        _ => {
            let id = HeaderValue::from_str(&Uuid::new_v4().to_string())
                .expect("a UUID is a valid header value");
            headers.insert(REQUEST_ID, id.clone());
            id
        }
    }
}

/// Accept errors that concern one connection only (the client gave up before we took it).
fn is_connection_error(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// A connection that ended in an error: a client's doing (a disconnect, a timeout, bytes
/// that are not HTTP) at debug, since clients do that all day; anything else as a warning.
fn log_connection_error(peer: SocketAddr, err: &(dyn std::error::Error + 'static)) {
    let client_fault = match err.downcast_ref::<hyper::Error>() {
        Some(err) => {
            err.is_incomplete_message()
                || err.is_parse()
                || err.is_parse_too_large()
                || err.is_timeout()
                || err.is_closed()
                || err.is_canceled()
                || io_error(err).is_some()
        }
        None => io_error(err).is_some(),
    };
    if client_fault {
        tracing::debug!(%peer, error = %err, "connection ended by the client");
    } else {
        tracing::warn!(%peer, error = %err, "connection error");
    }
}

/// The I/O error behind `err`, if any.
fn io_error<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a std::io::Error> {
    let mut source = Some(err);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        source = err.source();
    }
    None
}

/// What the server knows of one open connection.
struct Conn {
    id: u64,
    /// The client's network ([`leadtrack_http::client_network`]).
    address: IpAddr,
    opened: Instant,
    /// Milliseconds from `opened` to the last byte read or written.
    last_active: AtomicU64,
    /// Requests whose response is not ready yet.
    in_flight: AtomicUsize,
    /// Requests in flight whose body has not all arrived.
    awaiting_body: AtomicUsize,
    /// Whether any request has arrived.
    served: AtomicBool,
    /// Set when the connection is to close to make room for another.
    evicted: AtomicBool,
    close: Notify,
}

impl Conn {
    fn touch(&self) {
        let millis = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_active.store(millis, Ordering::Relaxed);
    }

    fn last_active(&self) -> Instant {
        self.opened + Duration::from_millis(self.last_active.load(Ordering::Relaxed))
    }

    fn idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    /// Whether no request of the connection is being answered: it is idle, or its request
    /// is still waiting for its body.
    fn unused(&self) -> bool {
        // Read in this order, a request whose body ends meanwhile counts as being answered.
        let awaiting = self.awaiting_body.load(Ordering::Acquire);
        self.in_flight.load(Ordering::Acquire) <= awaiting
    }

    fn staying(&self) -> bool {
        !self.evicted.load(Ordering::Relaxed)
    }

    /// Asks the connection to close.
    fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        self.close.notify_one();
    }
}

/// The open connections, for the cap.
#[derive(Default)]
struct Registry {
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Registry {
    /// A new connection from `peer`, making room as [`ServeOptions`] says: past its
    /// address's share, its own connections quiet for [`SHARE_GRACE`] go, oldest first,
    /// until it is back within it; past the cap, one of the address holding the most (its
    /// idlest, else its newest). `None` when the new connection is the one to go.
    fn admit(&self, peer: IpAddr, options: &ServeOptions) -> Option<Arc<Conn>> {
        let address = leadtrack_http::client_network(peer);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let share = options.max_connections_per_address;
        if share > 0 {
            trim_to_share(&open, address, share);
        }
        let staying = open.values().filter(|conn| conn.staying()).count();
        if staying >= options.max_connections {
            match hog(&open) {
                Some(hog) if hog != address => evict_from(&open, hog),
                // The new connection is the hog's own: its idlest goes, or it does.
                _ => {
                    if !evict(&open, Some(address)) {
                        return None;
                    }
                }
            }
        }
        let conn = Arc::new(Conn {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            address,
            opened: Instant::now(),
            last_active: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            awaiting_body: AtomicUsize::new(0),
            served: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            close: Notify::new(),
        });
        open.insert(conn.id, Arc::clone(&conn));
        Some(conn)
    }

    /// Asks the connection idle longest to close; `false` when none is idle.
    fn evict_idlest(&self) -> bool {
        evict(
            &self.open.lock().unwrap_or_else(PoisonError::into_inner),
            None,
        )
    }

    fn remove(&self, id: u64) {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// How long a connection must have been quiet (no byte either way, and no request being
/// answered) before its own address's newcomer may close it. A client that opens a new
/// connection has just sent requests on all of its others, and the server may not have
/// read them yet: closing one of those would lose a lead from a sender that never retries.
/// A connection quiet this long is one the client is not using, or a request whose body
/// has stalled.
const SHARE_GRACE: Duration = Duration::from_secs(1);

/// Asks `address`'s connections quiet for [`SHARE_GRACE`] to close, oldest first, until
/// a new one fits within `share`. Its requests being answered and its recently active
/// connections stay: the address may then hold more than its share, up to the cap, where
/// the address holding the most makes room.
fn trim_to_share(open: &HashMap<u64, Arc<Conn>>, address: IpAddr, share: usize) {
    let mut held: Vec<&Arc<Conn>> = open
        .values()
        .filter(|conn| conn.staying() && conn.address == address)
        .collect();
    if held.len() < share {
        return;
    }
    let excess = held.len() + 1 - share;
    let quiet_since = Instant::now().checked_sub(SHARE_GRACE);
    held.retain(|conn| conn.unused() && quiet_since.is_some_and(|at| conn.last_active() <= at));
    held.sort_by_key(|conn| conn.last_active());
    for conn in held.into_iter().take(excess) {
        conn.evict();
    }
}

/// Asks the connection idle longest (of `address`, when given) to close; `false` when
/// none is idle.
fn evict(open: &HashMap<u64, Arc<Conn>>, address: Option<IpAddr>) -> bool {
    let idlest = open
        .values()
        .filter(|conn| conn.idle() && conn.staying())
        .filter(|conn| address.is_none_or(|address| conn.address == address))
        .min_by_key(|conn| conn.last_active());
    idlest.inspect(|conn| conn.evict()).is_some()
}

/// Asks a connection of `address` to close: its idlest, else its newest.
fn evict_from(open: &HashMap<u64, Arc<Conn>>, address: IpAddr) {
    if !evict(open, Some(address)) {
        let newest = open
            .values()
            .filter(|conn| conn.staying() && conn.address == address)
            .max_by_key(|conn| conn.id);
        if let Some(conn) = newest {
            conn.evict();
        }
    }
}

/// The address holding the most connections that stay.
fn hog(open: &HashMap<u64, Arc<Conn>>) -> Option<IpAddr> {
    let mut held: HashMap<IpAddr, usize> = HashMap::new();
    for conn in open.values().filter(|conn| conn.staying()) {
        *held.entry(conn.address).or_default() += 1;
    }
    held.into_iter()
        .max_by_key(|(_, count)| *count)
        .map(|(address, _)| address)
}

/// One connection's task: it leaves the registry when it ends, however it ends.
struct Connection {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
    options: ServeOptions,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.registry.remove(self.conn.id);
    }
}

impl Connection {
    /// Resolves, with the reason, when the connection is to be closed: evicted, no request
    /// within the header timeout of its start (hyper's own header timeout only starts once
    /// it knows the protocol), or idle too long.
    async fn watchdog(&self) -> &'static str {
        let conn = &self.conn;
        loop {
            let deadline = if !conn.idle() {
                Instant::now() + self.options.idle_timeout
            } else if !conn.served.load(Ordering::Acquire) {
                conn.opened + self.options.header_read_timeout
            } else {
                conn.last_active() + self.options.idle_timeout
            };
            tokio::select! {
                () = conn.close.notified() => return "evicted to make room",
                () = tokio::time::sleep_until(deadline) => {}
            }
            if !conn.idle() {
                continue;
            }
            let now = Instant::now();
            if !conn.served.load(Ordering::Acquire) {
                if now >= conn.opened + self.options.header_read_timeout {
                    return "no request within the header timeout";
                }
            } else if now >= conn.last_active() + self.options.idle_timeout {
                return "idle timeout";
            }
        }
    }
}

/// A request in flight on a connection, from its headers until its response is ready.
struct Busy(Arc<Conn>);

impl Busy {
    fn start(conn: Arc<Conn>) -> Self {
        conn.served.store(true, Ordering::Release);
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(conn)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The socket, noting when bytes last moved, and giving hyper's own error answers the
/// contract's JSON body (see [`crate::http_errors`]).
struct Tracked {
    io: TcpStream,
    conn: Arc<Conn>,
    /// A rewritten error answer of hyper's, and how much of it is written: hyper was told
    /// its answer is written, so this goes out before anything else (flush, shutdown).
    rewritten: Option<(Vec<u8>, usize)>,
}

impl Tracked {
    fn new(io: TcpStream, conn: Arc<Conn>) -> Self {
        Self {
            io,
            conn,
            rewritten: None,
        }
    }

    /// Writes `buf` to the socket.
    fn poll_write_raw(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.conn.touch();
        }
        polled
    }

    /// Writes what is left of a rewritten answer.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some((bytes, written)) = self.rewritten.take() {
            if written == bytes.len() {
                break;
            }
            let polled = self.poll_write_raw(cx, &bytes[written..]);
            let n = match polled {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => n,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => {
                    self.rewritten = Some((bytes, written));
                    return Poll::Pending;
                }
            };
            self.rewritten = Some((bytes, written + n));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.touch();
        }
        polled
    }
}

/// Vectored, so that hyper writes a response's body from the bytes the route produced
/// instead of copying it into the connection's write buffer, which would keep the capacity
/// of the largest response for as long as the connection lives. hyper's own error answers
/// have no body: they come as the last buffer of a write, whose end
/// [`http_errors::split`] reads.
impl AsyncWrite for Tracked {
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        let Some(last) = bufs.iter().rposition(|buf| !buf.is_empty()) else {
            return Poll::Ready(Ok(0));
        };
        let bufs = match http_errors::split(&bufs[last]) {
            // An answer of hyper's: what comes before it first, then the answer alone.
            Some(_) if last == 0 => return Pin::new(this).poll_write(cx, &bufs[0]),
            Some(_) => &bufs[..last],
            None => &bufs[..=last],
        };
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.conn.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        match http_errors::split(buf) {
            Some(answer) if answer.start > 0 => this.poll_write_raw(cx, &buf[..answer.start]),
            Some(answer) => {
                this.rewritten = Some((http_errors::rewrite(&answer), 0));
                // Told written now; what the socket does not take yet goes out on the
                // flush that follows.
                if let Poll::Ready(Err(err)) = this.poll_drain(cx) {
                    return Poll::Ready(Err(err));
                }
                Poll::Ready(Ok(buf.len()))
            }
            None => this.poll_write_raw(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// A request body that fails once the body timeout has passed before its end.
struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<Sleep>>,
    /// The connection, counting this body in its `awaiting_body` until it has all arrived.
    awaiting: Option<Arc<Conn>>,
}

impl TimedBody {
    fn new(inner: Incoming, deadline: Pin<Box<Sleep>>, conn: &Arc<Conn>) -> Self {
        let awaiting = (!inner.is_end_stream()).then(|| {
            conn.awaiting_body.fetch_add(1, Ordering::AcqRel);
            Arc::clone(conn)
        });
        Self {
            inner,
            deadline,
            awaiting,
        }
    }

    /// The body has all arrived, failed or been dropped: its request is no longer waiting.
    fn arrived(&mut self) {
        if let Some(conn) = self.awaiting.take() {
            conn.awaiting_body.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for TimedBody {
    fn drop(&mut self) {
        self.arrived();
    }
}

/// The error of a [`TimedBody`] read too slowly.
#[derive(Debug, thiserror::Error)]
#[error("the request body was not received within the body timeout")]
struct BodyTimeout;

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            if !matches!(frame, Some(Ok(_))) || self.inner.is_end_stream() {
                self.arrived();
            }
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTimeout))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
