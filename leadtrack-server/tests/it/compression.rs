//! The standalone server compresses responses for clients that accept gzip, over a real
//! socket: the body gunzips to exactly what an uncompressing client gets. The capture
//! script, compressed ahead, is not compressed again.

use std::io::Read;
use std::net::SocketAddr;

use bytes::Bytes;
use flate2::read::GzDecoder;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use leadtrack_server::ServeOptions;
use std::convert::Infallible;
use tokio::net::{TcpListener, TcpStream};

use warp::http::StatusCode;
use warp::{Filter, Reply};

/// A server with a large JSON listing and a tiny answer.
async fn spawn() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let leads: Vec<serde_json::Value> = (0..200)
        .map(|n| serde_json::json!({"id": n, "email": format!("lead{n}@example.com"), "status": "open"}))
        .collect();
    let listing = serde_json::json!({"message": "Leads retrieved", "leads": leads});
    let app = warp::path!("list")
        .map(move || warp::reply::json(&listing).into_response())
        .or(warp::path!("tiny").map(|| "ok".into_response()))
        .unify()
        .or(leadtrack_warp::script())
        .unify()
        .recover(|_| async { Ok::<_, Infallible>(StatusCode::NOT_FOUND.into_response()) })
        .unify();
    tokio::spawn(leadtrack_server::serve_app_with(
        listener,
        app,
        ServeOptions::default(),
        std::future::pending(),
    ));
    addr
}

/// `GET path` with `accept_encoding`: the status, `content-encoding` and the raw body.
async fn get(
    addr: SocketAddr,
    path: &str,
    accept_encoding: Option<&str>,
) -> (u16, Option<String>, Vec<u8>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let mut request = Request::get(path).header("host", "test");
    if let Some(encoding) = accept_encoding {
        request = request.header("accept-encoding", encoding);
    }
    let response = sender
        .send_request(request.body(Empty::<Bytes>::new()).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let encoding = response
        .headers()
        .get("content-encoding")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, encoding, body)
}

#[tokio::test]
async fn listings_are_gzipped_for_clients_that_accept_it() {
    let addr = spawn().await;
    let (status, encoding, plain) = get(addr, "/list", None).await;
    assert_eq!(
        (status, encoding),
        (200, None),
        "no Accept-Encoding, no compression"
    );
    let (status, encoding, gzipped) = get(addr, "/list", Some("gzip, deflate, br")).await;
    assert_eq!((status, encoding.as_deref()), (200, Some("gzip")));
    let mut unzipped = Vec::new();
    GzDecoder::new(&gzipped[..])
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain, "the same body");
    assert!(
        gzipped.len() * 5 < plain.len(),
        "{} of {} bytes",
        gzipped.len(),
        plain.len()
    );
    let (_, encoding, _) = get(addr, "/list", Some("br")).await;
    assert_eq!(encoding, None, "only gzip is offered");
    let (status, encoding, body) = get(addr, "/tiny", Some("gzip")).await;
    assert_eq!(
        (status, encoding, body),
        (200, None, b"ok".to_vec()),
        "too small to gain"
    );
}

#[tokio::test]
async fn the_script_goes_out_compressed_once_not_twice() {
    let addr = spawn().await;
    for (accept, coding) in [("gzip, deflate, br", "br"), ("gzip", "gzip")] {
        let (status, encoding, body) = get(addr, "/leadtrack.js", Some(accept)).await;
        assert_eq!(
            (status, encoding.as_deref()),
            (200, Some(coding)),
            "{accept}"
        );
        let mut decoded = Vec::new();
        if coding == "br" {
            brotli::BrotliDecompress(&mut &body[..], &mut decoded).unwrap();
        } else {
            GzDecoder::new(&body[..]).read_to_end(&mut decoded).unwrap();
        }
        assert_eq!(
            decoded,
            leadtrack_warp::SCRIPT.as_bytes(),
            "{accept}: decoded once"
        );
        assert!(body.len() < 6_000, "{coding}: {} bytes", body.len());
    }
}
