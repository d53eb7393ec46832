//! How much a search flood on one project delays another project's requests.
//!
//! ```sh
//! cargo run --release --example flood -- [LEADS] [CONNECTIONS] [SECONDS]
//! ```
//!
//! Seeds a project with `LEADS` leads (100,000 by default) that all match the search, serves
//! the lead routes in-process on port 0 (rate limits off, so the flood reaches the store),
//! then runs `CONNECTIONS` clients (500 by default, under the server's cap of 512) looping
//! `getLeads?search=lead` on it, retrying at once whatever the answer, for `SECONDS` (10)
//! while one client of another project alternates `getLead` and `createLead` and records
//! their latencies. The figures of `docs/protection.md` come from it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use leadtrack::core::project::{NewProject, Project};
use leadtrack::core::request::{CreateRoute, NewLead};
use leadtrack::core::{Admin, LeadStore};
use leadtrack::sqlite::SqliteStore;
use leadtrack::warp::{Config, RateLimit, RateLimits};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let leads = args.next().transpose()?.unwrap_or(100_000);
    let connections = args.next().transpose()?.unwrap_or(500);
    let seconds = args.next().transpose()?.unwrap_or(10);

    let store = SqliteStore::open_temporary().await?;
    let big = project(&store, "big").await?;
    let other = project(&store, "other").await?;
    let big_key = store.issue_api_key(big.id, Utc::now()).await?.key;
    let other_key = store.issue_api_key(other.id, Utc::now()).await?.key;
    let seeding = Instant::now();
    seed(&store, &big, leads).await?;
    let probe_lead = store
        .create_lead_via(other.id, CreateRoute::Server, lead_data(0), Utc::now())
        .await?
        .lead_id;
    eprintln!("seeded {leads} leads in {:.1?}", seeding.elapsed());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let config = Config {
        rate_limits: RateLimits {
            per_ip: RateLimit::OFF,
            per_key: RateLimit::OFF,
        },
        ..Config::default()
    };
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(leadtrack_server::serve(
        listener,
        store.clone(),
        config,
        async {
            let _ = stopped.await;
        },
    ));

    let probe = Probe {
        client: reqwest::Client::new(),
        get_lead: format!("{base}/api/leads/getLead?leadId={}", probe_lead.0),
        create_lead: format!("{base}/api/leads/createLead"),
        key: other_key,
        project: other.public_id.clone(),
    };
    let quiet = probe.run(Duration::from_secs(2)).await;

    let flooding = Arc::new(AtomicBool::new(true));
    let counts = Arc::new([0, 1, 2].map(|_| AtomicU64::new(0)));
    let search = format!("{base}/api/leads/getLeads?search=lead&limit=50");
    let flood: Vec<_> = (0..connections)
        .map(|_| {
            let (flooding, counts) = (Arc::clone(&flooding), Arc::clone(&counts));
            let (search, key) = (search.clone(), big_key.clone());
            tokio::spawn(async move {
                // One client each: one connection each, as separate clients would.
                let client = reqwest::Client::new();
                while flooding.load(Ordering::Relaxed) {
                    let status = client
                        .get(&search)
                        .header("X-API-Key", &key)
                        .send()
                        .await
                        .map(|r| r.status().as_u16());
                    let slot = match status {
                        Ok(200) => 0,
                        Ok(503) => 1,
                        _ => 2,
                    };
                    counts[slot].fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // Let the flood fill the queues before measuring.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let loaded = probe.run(Duration::from_secs(seconds)).await;
    flooding.store(false, Ordering::Relaxed);
    for task in &flood {
        task.abort();
    }
    let after_stop = Instant::now();
    let first = probe.get_lead().await;
    let recovered = after_stop.elapsed();

    println!("leads {leads}, flood connections {connections}, {seconds} s");
    println!(
        "flood searches: {} ok, {} 503, {} other",
        counts[0].load(Ordering::Relaxed),
        counts[1].load(Ordering::Relaxed),
        counts[2].load(Ordering::Relaxed)
    );
    quiet.print("no flood");
    loaded.print("under the flood");
    println!(
        "first getLead after the flood stopped: {:.1?} ({})",
        recovered,
        first.map_or_else(|e| e, |s| s.to_string())
    );

    let _ = stop_server.send(());
    let _ = server.await;
    store.close().await;
    Ok(())
}

async fn project(store: &SqliteStore, id: &str) -> Result<Project, Box<dyn std::error::Error>> {
    Ok(store
        .create_project(
            NewProject {
                public_id: Some(id.into()),
                name: id.into(),
                currency: None,
            },
            Utc::now(),
        )
        .await?)
}

fn lead_data(n: u64) -> leadtrack::core::lead::LeadData {
    let body = json!({
        "projectId": "seed",
        "userData": {"email": format!("lead{n}@example.com"), "firstName": format!("Lead{n}")},
    });
    let serde_json::Value::Object(body) = body else {
        unreachable!("a JSON object")
    };
    NewLead::from_object(body, CreateRoute::Server)
        .expect("a valid lead")
        .data
}

/// Writes `n` leads, many at a time so that group commit batches them.
async fn seed(
    store: &SqliteStore,
    project: &Project,
    n: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let writers = 256;
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            let id = project.id;
            tokio::spawn(async move {
                for i in (w..n).step_by(writers as usize) {
                    store
                        .create_lead_via(id, CreateRoute::Server, lead_data(i), Utc::now())
                        .await?;
                }
                Ok::<_, leadtrack::core::StoreError>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    Ok(())
}

/// The other project's client.
struct Probe {
    client: reqwest::Client,
    get_lead: String,
    create_lead: String,
    key: String,
    project: String,
}

/// Latencies of the probe's requests, and their statuses.
#[derive(Default)]
struct Latencies {
    get_lead: Vec<Duration>,
    create_lead: Vec<Duration>,
    statuses: std::collections::BTreeMap<String, u64>,
}

impl Probe {
    async fn get_lead(&self) -> Result<u16, String> {
        self.client
            .get(&self.get_lead)
            .header("X-API-Key", &self.key)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string())
    }

    async fn create_lead(&self, n: u64) -> Result<u16, String> {
        self.client
            .post(&self.create_lead)
            .json(&json!({
                "projectId": self.project,
                "userData": {"email": format!("probe{n}@example.com")},
            }))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string())
    }

    /// Alternates getLead and createLead for `length`.
    async fn run(&self, length: Duration) -> Latencies {
        let mut latencies = Latencies::default();
        let end = Instant::now() + length;
        let mut n = 0;
        while Instant::now() < end {
            n += 1;
            let start = Instant::now();
            let status = self.get_lead().await;
            latencies.get_lead.push(start.elapsed());
            *latencies
                .statuses
                .entry(format!("getLead {status:?}"))
                .or_default() += 1;
            let start = Instant::now();
            let status = self.create_lead(n).await;
            latencies.create_lead.push(start.elapsed());
            *latencies
                .statuses
                .entry(format!("createLead {status:?}"))
                .or_default() += 1;
        }
        latencies
    }
}

impl Latencies {
    fn print(mut self, what: &str) {
        for (name, samples) in [
            ("getLead", &mut self.get_lead),
            ("createLead", &mut self.create_lead),
        ] {
            samples.sort();
            let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
            println!(
                "{what}: {name} n={} p50 {:.1?} p99 {:.1?} max {:.1?}",
                samples.len(),
                at(0.5),
                at(0.99),
                at(1.0)
            );
        }
        println!("{what}: statuses {:?}", self.statuses);
    }
}
