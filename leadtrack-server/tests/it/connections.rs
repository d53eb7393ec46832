//! The standalone server's connection handling, over real sockets: slow and idle clients
//! are closed, a flood of idle connections does not lock others out, and one address holds
//! only its share: real sockets from several loopback addresses.

use leadtrack_core::testkit::capture_logs;
use std::net::SocketAddr;
use std::time::Duration;

use leadtrack_server::ServeOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::oneshot;
use tokio::time::{Instant, timeout};
use warp::Filter;

/// A server answering `/body` with its body's length, `/slow` after 1.5 s, and every other
/// request with whether it knows the client's address, with `options`.
async fn spawn(options: ServeOptions) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let body = warp::path!("body").and(leadtrack_http::body()).then(
        |body: leadtrack_http::Body| async move {
            let headers = warp::http::HeaderMap::new();
            match body.read(&headers, 1000).await {
                Ok(body) => format!("read {}", body.len()),
                Err(_) => "no body".to_owned(),
            }
        },
    );
    // An answer that takes a while, as a write does on a busy server.
    let slow = warp::path!("slow").then(|| async {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        "slow".to_owned()
    });
    let app = body
        .or(slow)
        .unify()
        .or(warp::any()
            .and(leadtrack_http::remote())
            .map(|peer: Option<SocketAddr>| format!("peer {}", peer.is_some())))
        .unify();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(leadtrack_server::serve_app_with(
        listener,
        app,
        options,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, stop)
}

fn short() -> ServeOptions {
    ServeOptions {
        header_read_timeout: Duration::from_secs(1),
        body_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(2),
        max_connections: 16,
        max_connections_per_address: 16,
    }
}

/// One request on a new connection; the whole response.
async fn get(addr: SocketAddr) -> String {
    get_from(1, addr).await
}

/// Whether the server closed `stream` (end of file or a reset) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

#[tokio::test]
async fn a_slowloris_is_closed_after_the_header_timeout_while_others_are_served() {
    let (addr, _stop) = spawn(short()).await;
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /x HTTP/1.1\r\n").await.unwrap();
    let started = Instant::now();
    let trickle = async {
        // A header byte every 100 ms: always some traffic, never a whole header.
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if slow.write_all(b"x").await.is_err() {
                break;
            }
        }
    };
    let (_, response) = tokio::join!(trickle, get(addr));
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with("peer true"), "{response}");
    assert!(
        closed_within(&mut slow, Duration::from_millis(100)).await,
        "still open after {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_silent_connection_and_a_kept_alive_one_are_closed() {
    let (addr, _stop) = spawn(short()).await;
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(b"GET /x HTTP/1.1\r\nhost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    assert!(closed_within(&mut silent, Duration::from_secs(3)).await);
    assert!(closed_within(&mut kept, Duration::from_secs(3)).await);
}

#[tokio::test]
async fn a_body_sent_too_slowly_fails_after_the_body_timeout() {
    let (addr, _stop) = spawn(short()).await;
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"POST /body HTTP/1.1\r\nhost: t\r\ncontent-length: 100\r\n\r\nabc")
        .await
        .unwrap();
    let mut response = String::new();
    let started = Instant::now();
    timeout(Duration::from_secs(4), slow.read_to_string(&mut response))
        .await
        .expect("an answer within the body timeout")
        .unwrap();
    assert!(response.ends_with("no body"), "{response}");
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn an_idle_flood_past_the_cap_does_not_lock_out_a_new_client() {
    let (addr, _stop) = spawn(ServeOptions {
        header_read_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        max_connections: 8,
        ..ServeOptions::default()
    })
    .await;
    let mut flood = Vec::new();
    for _ in 0..40 {
        flood.push(TcpStream::connect(addr).await.unwrap());
    }
    let response = get(addr).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    // The oldest idle connections made room: at most the cap stay open.
    let mut open = 0;
    for stream in &mut flood {
        if !closed_within(stream, Duration::from_millis(20)).await {
            open += 1;
        }
    }
    assert!(open <= 8, "{open} idle connections still open");
}

/// Sends `request` on a new connection; what comes back until the server closes it.
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The server may answer and close before it has read everything.
    let _ = stream.write_all(request).await;
    let mut response = Vec::new();
    let _ = timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
    String::from_utf8_lossy(&response).into_owned()
}

/// Asserts that `response` is the HTTP layer's refusal `status` with the contract's JSON
/// body of `code` and the CORS header.
fn assert_refused(response: &str, status: &str, code: &str) {
    let (head, body) = response.split_once("\r\n\r\n").expect(response);
    assert!(
        head.starts_with(&format!("HTTP/1.1 {status}\r\n")),
        "{head}"
    );
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("\r\ncontent-type: application/json\r\n"),
        "{head}"
    );
    assert!(
        head.contains("\r\naccess-control-allow-origin: *\r\n"),
        "{head}"
    );
    assert!(
        head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(body).expect(body);
    assert_eq!(body["code"], code, "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
}

/// Asserts that a request with `fields` header fields, and one with a field of
/// `field_bytes`, each get the JSON 431.
async fn assert_headers_refused(addr: SocketAddr, fields: usize, field_bytes: usize) {
    let mut many = String::from("GET /x HTTP/1.1\r\nhost: t\r\n");
    for i in 0..fields {
        many.push_str(&format!("x-h{i}: v\r\n"));
    }
    let huge = format!("x-big: {}\r\n", "b".repeat(field_bytes));
    let big = format!("GET /x HTTP/1.1\r\nhost: t\r\n{huge}");
    for request in [many, big] {
        let answer = exchange(addr, format!("{request}\r\n").as_bytes()).await;
        let refused = "431 Request Header Fields Too Large";
        assert_refused(&answer, refused, "headers_too_large");
    }
}

#[tokio::test]
async fn requests_http_refuses_get_json_errors_and_clients_leaving_are_not_logged_as_errors() {
    // Lines at WARN and above (this test's thread: `#[tokio::test]` runs the server's
    // tasks on it too).
    let warnings = capture_logs(tracing::Level::WARN);
    let (addr, _stop) = spawn(short()).await;
    let garbage = exchange(addr, b"HELLO THERE\r\n\r\n").await;
    assert_refused(&garbage, "400 Bad Request", "bad_request");
    let long_url = format!("GET /{} HTTP/1.1\r\nhost: t\r\n\r\n", "a".repeat(70_000));
    let long = exchange(addr, long_url.as_bytes()).await;
    assert_refused(&long, "414 URI Too Long", "uri_too_long");
    assert_headers_refused(addr, 200, 500_000).await;
    // Behind a response on the same connection (pipelined), the refusal is still JSON.
    let pipelined = format!("GET /x HTTP/1.1\r\nhost: t\r\n\r\n{long_url}");
    let pipelined = exchange(addr, pipelined.as_bytes()).await;
    let second = pipelined.find("HTTP/1.1 414").expect(&pipelined);
    assert!(pipelined.starts_with("HTTP/1.1 200 OK\r\n"), "{pipelined}");
    assert_refused(&pipelined[second..], "414 URI Too Long", "uri_too_long");
    // A client that leaves mid-header, and one that leaves mid-body.
    let mut gone = TcpStream::connect(addr).await.unwrap();
    gone.write_all(b"GET /x HTTP/1.1\r\nhos").await.unwrap();
    drop(gone);
    let mut gone = TcpStream::connect(addr).await.unwrap();
    gone.write_all(b"POST /body HTTP/1.1\r\nhost: t\r\ncontent-length: 9\r\n\r\nab")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(gone);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let response = get(addr).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert_eq!(warnings.text(), "", "client faults are logged at debug");
}

/// Header fields far past the server's limits are refused by hyper itself, before the
/// server's own check; the answer is still the contract's JSON 431.
#[tokio::test]
async fn headers_far_past_the_limits_still_get_the_json_431() {
    let (addr, _stop) = spawn(short()).await;
    assert_headers_refused(addr, 1_000, 2_000_000).await;
}

/// One request with `headers` (`name: value` lines) on a new connection; the response's
/// `x-request-id` header, if any.
async fn request_id_answered(addr: SocketAddr, headers: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /x HTTP/1.1\r\nhost: t\r\n{headers}connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    timeout(Duration::from_secs(5), stream.read_to_string(&mut response))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let ids: Vec<&str> = response
        .lines()
        .filter_map(|line| line.strip_prefix("x-request-id: "))
        .collect();
    assert!(ids.len() <= 1, "one id at most: {response}");
    ids.first().map(|id| (*id).to_owned())
}

#[tokio::test]
async fn every_response_carries_the_request_id_the_client_sent_or_a_new_one() {
    let (addr, _stop) = spawn(short()).await;
    let kept = request_id_answered(addr, "x-request-id: lb-7f3a.2:9/Q+=@x_y\r\n").await;
    assert_eq!(kept.as_deref(), Some("lb-7f3a.2:9/Q+=@x_y"));

    let first = request_id_answered(addr, "").await.expect("an id");
    let second = request_id_answered(addr, "").await.expect("an id");
    for id in [&first, &second] {
        assert_eq!(
            uuid::Uuid::parse_str(id).map(|u| u.get_version_num()),
            Ok(4),
            "{id}"
        );
    }
    assert_ne!(first, second);

    // Ids that could forge or garble a log line, or flood it, are replaced.
    let too_long = format!("x-request-id: {}\r\n", "a".repeat(129));
    for bad in [
        "x-request-id: a b\r\n",
        "x-request-id: a\"}{\r\n",
        too_long.as_str(),
    ] {
        let replaced = request_id_answered(addr, bad).await.expect("an id");
        assert!(
            uuid::Uuid::parse_str(&replaced).is_ok(),
            "{bad} gave {replaced}"
        );
    }
}

/// A connection to `addr` from `127.0.0.{host}`.
async fn connect_from(host: u8, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::from(([127, 0, 0, host], 0)))
        .unwrap();
    socket.connect(addr).await.unwrap()
}

/// One request from `127.0.0.{host}` on a new connection; the whole response.
async fn get_from(host: u8, addr: SocketAddr) -> String {
    let mut stream = connect_from(host, addr).await;
    stream
        .write_all(b"GET /x HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    timeout(Duration::from_secs(5), stream.read_to_string(&mut response))
        .await
        .expect("an answer within 5 s")
        .expect("no reset");
    response
}

/// How many of `streams` the server keeps open (those it closed are closed at once).
async fn still_open(streams: &mut [TcpStream]) -> usize {
    let mut open = 0;
    for stream in streams {
        if !closed_within(stream, Duration::from_millis(50)).await {
            open += 1;
        }
    }
    open
}

fn shares(max_connections: usize, per_address: usize) -> ServeOptions {
    ServeOptions {
        header_read_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        max_connections,
        max_connections_per_address: per_address,
        ..ServeOptions::default()
    }
}

#[tokio::test]
async fn one_address_holds_only_its_share_and_others_are_served_meanwhile() {
    let (addr, _stop) = spawn(shares(64, 8)).await;
    let mut visitors = Vec::new();
    for host in 3..=6 {
        visitors.push(connect_from(host, addr).await);
    }
    let mut hog = Vec::new();
    for _ in 0..40 {
        hog.push(connect_from(2, addr).await);
    }
    // Quiet for over a second, they are not in use: its next connection trims them.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    hog.push(connect_from(2, addr).await);
    for host in 3..=12 {
        let response = get_from(host, addr).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    // Its own oldest made room for its newest: 8 stay, the 8 newest.
    assert_eq!(still_open(&mut hog).await, 8);
    assert_eq!(still_open(&mut hog[33..]).await, 8);
    assert_eq!(
        still_open(&mut visitors).await,
        4,
        "no other address's connection closed"
    );
}

#[tokio::test]
async fn past_its_share_an_address_whose_connections_are_all_busy_is_still_served() {
    let (addr, _stop) = spawn(shares(64, 8)).await;
    // Eight requests being answered for one address (an office behind NAT), slowly.
    let mut busy = Vec::new();
    for _ in 0..8 {
        let mut stream = connect_from(2, addr).await;
        stream
            .write_all(b"GET /slow HTTP/1.1\r\nhost: t\r\n\r\n")
            .await
            .unwrap();
        busy.push(stream);
    }
    // However long they take, its ninth and tenth are served, and none is closed: the
    // next visitor behind the same address never retries.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    for _ in 0..2 {
        let response = get_from(2, addr).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    for stream in &mut busy {
        let mut response = String::new();
        let mut buf = [0u8; 1024];
        while !response.ends_with("slow") {
            let n = timeout(Duration::from_secs(5), stream.read(&mut buf))
                .await
                .expect("an answer within 5 s")
                .expect("no reset");
            assert!(n > 0, "closed before its answer: {response}");
            response.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
}

#[tokio::test]
async fn past_its_share_requests_whose_bodies_stalled_make_room() {
    let (addr, _stop) = spawn(shares(64, 8)).await;
    // Twenty requests whose bodies stopped coming, quiet for over a second.
    let mut stalled = Vec::new();
    for _ in 0..20 {
        let mut stream = connect_from(2, addr).await;
        stream
            .write_all(b"POST /body HTTP/1.1\r\nhost: t\r\ncontent-length: 4\r\n\r\nab")
            .await
            .unwrap();
        stalled.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let response = get_from(2, addr).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    // The newest 7 and the new one make its share.
    assert_eq!(still_open(&mut stalled).await, 7);
    assert_eq!(still_open(&mut stalled[13..]).await, 7);
}

#[tokio::test]
async fn past_its_share_a_pooling_clients_connections_just_used_stay_open() {
    let (addr, _stop) = spawn(shares(64, 8)).await;
    // A client keeping 8 connections alive, each just answered: it may be sending its next
    // request on any of them when it opens a ninth.
    let mut pooled = Vec::new();
    for _ in 0..8 {
        let mut stream = connect_from(2, addr).await;
        assert!(ask(&mut stream).await.starts_with("HTTP/1.1 200"));
        pooled.push(stream);
    }
    let mut ninth = connect_from(2, addr).await;
    assert!(ask(&mut ninth).await.starts_with("HTTP/1.1 200"));
    for stream in &mut pooled {
        let response = ask(stream).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
}

/// A kept-alive request on `stream`; its response's first bytes.
async fn ask(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"GET /x HTTP/1.1\r\nhost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = timeout(Duration::from_secs(5), stream.read(&mut buf))
        .await
        .expect("an answer within 5 s")
        .expect("no reset");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[tokio::test]
async fn at_the_cap_the_address_holding_most_makes_room_never_another() {
    let (addr, _stop) = spawn(shares(16, 12)).await;
    let mut hog = Vec::new();
    for _ in 0..12 {
        hog.push(connect_from(2, addr).await);
    }
    let mut visitor = Vec::new();
    for _ in 0..4 {
        visitor.push(connect_from(3, addr).await);
    }
    // The server is full: each newcomer's room comes from the address holding the most.
    let mut newcomers = Vec::new();
    for host in 4..=9 {
        newcomers.push(connect_from(host, addr).await);
    }
    let response = get_from(10, addr).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert_eq!(
        still_open(&mut visitor).await,
        4,
        "the visitor keeps every connection"
    );
    assert_eq!(still_open(&mut newcomers).await, 6);
    assert_eq!(
        still_open(&mut hog).await,
        5,
        "one of the hog's per newcomer"
    );
}
