//! No credential reaches a log line or a recorded error. Alone in its test binary: the
//! log capture is a thread's default subscriber, which other tests' threads would race.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use leadtrack_forward::testkit::MockResponse;
use serde_json::json;

/// Captures log lines, to check that no credential is ever logged.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_secret_reaches_a_log_line_or_a_recorded_error() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let f = fixture().await;
    f.platforms.meta.push(MockResponse::json(
        400,
        json!({"error": {"message": format!("bad token {META_TOKEN}"), "code": 190}}),
    ));
    f.platforms
        .ga4
        .push(MockResponse::json(500, json!({"echo": GA4_SECRET})));
    f.platforms
        .hook
        .push(MockResponse::json(500, json!({"echo": WEBHOOK_SECRET})));
    f.platforms
        .token
        .push(MockResponse::json(500, json!({"echo": ADS_CLIENT_SECRET})));
    let lead = f.rated_lead(full_lead(), None).await;
    let record = f.run_until_done(&worker(&f.store, fast()), lead).await;

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("delivery attempt"),
        "the worker logged: {logs}"
    );
    let recorded: Vec<String> = record
        .deliveries
        .iter()
        .flat_map(|(_, a)| a.iter().filter_map(|a| a.error.clone()))
        .collect();
    assert!(recorded.len() >= 4, "{recorded:?}");
    for secret in SECRETS {
        assert!(!logs.contains(secret), "{secret} in the logs");
        assert!(
            recorded.iter().all(|e| !e.contains(secret)),
            "{secret} in {recorded:?}"
        );
    }
    assert!(
        !logs.contains("Ada.Lovelace@Gmail.com"),
        "no personal data in the logs either"
    );
}
