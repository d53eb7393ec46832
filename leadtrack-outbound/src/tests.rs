use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// A server on `ip` answering every request with `answer`, and how many connections it
/// has had.
async fn serve(ip: &str, answer: String) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut request = [0_u8; 4096];
                let _ = socket.read(&mut request).await;
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    (addr, seen)
}

fn ok() -> String {
    "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_owned()
}

fn client(allowed: &str, hosts: &[(&str, IpAddr)]) -> Outbound {
    let targets = Targets::new(allowed, true).unwrap();
    Outbound::with_hosts(targets, Duration::from_secs(5), hosts)
}

/// A `GET` of `url` that the rule allows at once, sent.
async fn get(client: &Outbound, url: &str) -> Result<reqwest::Response, reqwest::Error> {
    client.get(url).unwrap().send().await
}

fn loopback(kind_host: &str) -> Refusal {
    Refusal::Special {
        kind: "loopback",
        host: kind_host.to_owned(),
    }
}

#[tokio::test]
async fn an_allowed_address_is_called() {
    let (addr, seen) = serve("127.0.0.1", ok()).await;
    let url = format!("http://{addr}/x");
    let answer = get(&client("127.0.0.1", &[]), &url).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.text().await.unwrap(), "ok");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_address_written_as_the_host_is_refused_before_anything_is_sent() {
    let (addr, seen) = serve("127.0.0.1", ok()).await;
    let strict = client("", &[]);
    let port = addr.port();
    for url in [
        format!("http://{addr}/x"),
        format!("http://2130706433:{port}/x"),
        format!("http://0177.0.0.1:{port}/x"),
        format!("http://localhost:{port}/x"),
    ] {
        let refusal = strict.get(&url).unwrap_err();
        assert!(
            matches!(
                refusal,
                Refusal::Special {
                    kind: "loopback",
                    ..
                }
            ),
            "{url}: {refusal:?}"
        );
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_name_that_resolves_to_a_refused_address_is_refused_when_called() {
    let (addr, seen) = serve("127.0.0.1", ok()).await;
    let hosts = [("hooks.example", IpAddr::from([127, 0, 0, 1]))];
    let url = format!("http://hooks.example:{}/x", addr.port());
    let err = get(&client("", &hosts), &url).await.unwrap_err();
    assert_eq!(refusal(&err), Some(&loopback("hooks.example, 127.0.0.1")));
    assert_eq!(seen.load(Ordering::SeqCst), 0);

    let allowed = client("127.0.0.0/8", &hosts);
    let answer = get(&allowed, &url).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn only_the_allowed_addresses_of_a_name_are_connected_to() {
    let (addr, seen) = serve("127.0.0.3", ok()).await;
    // The name's first address is refused; its second, allowed, one is called.
    let hosts = [
        ("hooks.example", IpAddr::from([127, 0, 0, 2])),
        ("hooks.example", IpAddr::from([127, 0, 0, 3])),
    ];
    let url = format!("http://hooks.example:{}/x", addr.port());
    let answer = get(&client("127.0.0.3", &hosts), &url).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_systems_resolver_is_checked_too() {
    let (addr, seen) = serve("127.0.0.1", ok()).await;
    // `localhost` from the system's resolver (often both ::1 and 127.0.0.1): with only
    // 127.0.0.0/8 allowed, 127.0.0.1 is the address called.
    let url = format!("http://localhost:{}/x", addr.port());
    let answer = get(&client("127.0.0.0/8", &[]), &url).await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let (inner, inner_seen) = serve("127.0.0.1", ok()).await;
    let moved = format!(
        "HTTP/1.1 302 Found\r\nlocation: http://{inner}/secret\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    let (outer, outer_seen) = serve("127.0.0.2", moved).await;
    let url = format!("http://{outer}/hook");
    let answer = get(&client("127.0.0.2", &[]), &url).await.unwrap();
    assert_eq!(answer.status(), 302);
    assert_eq!(outer_seen.load(Ordering::SeqCst), 1);
    assert_eq!(inner_seen.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn https_only_unless_the_operator_allows_http() {
    let strict = Outbound::new(Targets::default(), Duration::from_secs(5));
    assert_eq!(
        strict.post("http://example.com/hook").unwrap_err(),
        Refusal::Http
    );
    assert_eq!(
        strict.post("https://user@example.com/hook").unwrap_err(),
        Refusal::UserInfo
    );
}
