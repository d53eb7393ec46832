//! `loadgen`: the benchmark behind `docs/performance.md`.
//!
//! ```sh
//! cargo run --release -p leadtrack-bench              # 1M leads, every route, ~12 min
//! cargo run --release -p leadtrack-bench -- --quick   # a smoke test of a few seconds
//! cargo run --release -p leadtrack-bench -- --import 100000   # a CSV import, timed
//! ```
//!
//! It builds the server, starts it on a fresh database (pinned to the first core, itself
//! to the second, when `taskset` is there), fills it with a realistic data set through
//! createServerSideLead (80% of the leads in one project, 10% in each of two others), then
//! measures each route at each number of connections, with the static ceiling (an
//! unauthenticated request the server refuses at once) in the same run. It prints a table
//! and writes JSON, with the server's peak memory and the database's size against the raw
//! JSON of the leads.
//!
//! A failed request fails the run (exit code 1): `--quick` is a smoke test of every route
//! under concurrency. Requests the server sheds under overload (503 with `Retry-After`, as
//! its reader queues are meant to) are counted and reported apart; a run where nothing
//! was served fails too. Nothing about the timings is asserted.

mod data;
mod import;
mod load;
mod server;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use serde_json::{Value, json};

use crate::load::{Call, Until};
use crate::server::{Failure, Server};

/// The benchmark's options.
#[derive(Debug, Parser)]
#[command(name = "loadgen")]
struct Args {
    /// A small data set and short runs, against a dev build: a smoke test (CI runs it);
    /// its figures mean nothing.
    #[arg(long)]
    quick: bool,
    /// Leads in the data set [default: 1000000, or 5000 with --quick].
    #[arg(long, value_name = "N")]
    leads: Option<u64>,
    /// Seconds each measurement runs [default: 10, or 1 with --quick].
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// Connection counts [default: 1,16,64,512, or 1,16 with --quick].
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    connections: Option<Vec<usize>>,
    /// Where the results are written as JSON.
    #[arg(long, default_value = "target/loadgen.json", value_name = "PATH")]
    json: PathBuf,
    /// Measure only the routes whose name contains one of these (the static ceiling is
    /// always measured) [default: every route].
    #[arg(long, value_delimiter = ',', value_name = "TEXT,...")]
    routes: Option<Vec<String>>,
    /// Keep the database in this directory (it must hold none yet) instead of a temporary
    /// one, to look into it afterwards.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Run the server on this empty PostgreSQL database (`postgres://…`) instead of a new
    /// SQLite file.
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// While each route is measured, one more client (from 127.0.0.2) tries to hold this
    /// many connections, each a createLead whose body never comes: the load's latency
    /// beside a client hogging connections [default: 0].
    #[arg(long, default_value_t = 0, value_name = "N")]
    hog: usize,
    /// Instead of the routes, time `lead import` of a CSV file of this many of the data
    /// set's leads, and of the same file again.
    #[arg(long, value_name = "ROWS")]
    import: Option<u64>,
    /// The server binary to measure [default: built by cargo].
    #[arg(long, value_name = "PATH")]
    server: Option<PathBuf>,
}

/// One measured route at one number of connections.
struct Row {
    route: &'static str,
    connections: usize,
    stats: load::Stats,
    /// The server's peak resident memory so far, in bytes, once this row was measured.
    peak_rss: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(code) = pinned_to_second_core() {
        return code;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bench(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::FAILURE
        }
    }
}

/// Runs this program again on the second core, when there is one and `taskset`, and
/// returns its exit code; `None` when this is that run, or it cannot be pinned.
fn pinned_to_second_core() -> Option<ExitCode> {
    const PINNED: &str = "LEADTRACK_LOADGEN_PINNED";
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if std::env::var_os(PINNED).is_some() || cores < 2 {
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let status = std::process::Command::new("taskset")
        .args(["-c", "1"])
        .arg(me)
        .args(std::env::args_os().skip(1))
        .env(PINNED, "1")
        .status()
        .ok()?;
    Some(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The project leads of the data set go to: 80% the first, 10% each of the others.
fn project_of(n: u64) -> usize {
    match n % 10 {
        8 => 1,
        9 => 2,
        _ => 0,
    }
}

fn query(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

async fn bench(args: Args) -> Result<(), Failure> {
    let leads = args
        .leads
        .unwrap_or(if args.quick { 5_000 } else { 1_000_000 });
    let seconds = args.seconds.unwrap_or(if args.quick { 1.0 } else { 10.0 });
    let duration = Duration::from_secs_f64(seconds);
    let connections = args.connections.clone().unwrap_or(if args.quick {
        vec![1, 16]
    } else {
        vec![1, 16, 64, 512]
    });
    let binary = match &args.server {
        Some(path) => path.clone(),
        None => server::build(!args.quick)?,
    };
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = match &args.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.clone()
        }
        None => temporary.path().to_owned(),
    };
    let server = Server::start(&binary, &dir, args.db.as_deref()).await?;
    if let Some(rows) = args.import {
        let timed = imports(&server, &dir, rows).await;
        server.stop().await;
        return timed;
    }
    // The API keys of the three projects, the first project's first.
    let mut keys = vec![server.key.clone()];
    for name in ["Second", "Third"] {
        let made = server.admin(&["project", "create", "--name", name]).await?;
        keys.push(made["apiKey"].as_str().unwrap_or_default().to_owned());
    }
    let label = server
        .admin(&[
            "label",
            "create",
            "--project",
            &server.project,
            "--name",
            "Customer",
        ])
        .await?["labelId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let keys = Arc::new(keys);

    let (fill, raw, first) = fill(&server, keys, leads).await?;
    let filled_size = server.database_size().await;
    println!(
        "filled in {:.1} s: {:.0} leads/s (64 connections), p50 {:.1} ms, p99 {:.1} ms",
        fill.elapsed.as_secs_f64(),
        fill.rate(),
        fill.ms(50.0),
        fill.ms(99.0)
    );

    let context = Context {
        project: server.project.clone(),
        key: server.key.clone(),
        label,
        first,
        next_new: Arc::new(AtomicU64::new(leads)),
        next_rated: Arc::new(AtomicU64::new(0)),
    };
    let rows = measure(&args, &server, &context, (&connections, duration)).await?;
    let (rss, peak) = server.memory();
    let size = server.database_size().await;
    server.stop().await;
    report(
        &args,
        leads,
        &fill,
        raw,
        filled_size,
        size,
        (rss, peak),
        &rows,
    )
}

/// Times the import of a `rows`-row file written in `dir`, then of the same file again,
/// and prints each outcome.
async fn imports(server: &Server, dir: &std::path::Path, rows: u64) -> Result<(), Failure> {
    let file = dir.join("past-leads.csv");
    std::fs::write(&file, import::csv(rows)).map_err(|e| format!("{}: {e}", file.display()))?;
    for run in ["first import", "the same file again"] {
        let done = import::run(server, &file).await?;
        println!(
            "{run}: {rows} rows in {:.2} s ({:.0} rows/s), peak RSS {:.0} MiB: {}",
            done.elapsed.as_secs_f64(),
            rows as f64 / done.elapsed.as_secs_f64(),
            done.peak_rss as f64 / (1024.0 * 1024.0),
            done.outcome
        );
    }
    println!(
        "database size {:.0} MiB",
        server.database_size().await as f64 / (1024.0 * 1024.0)
    );
    Ok(())
}

/// Fills the data set, `leads` leads through createServerSideLead into the projects of
/// `keys`: the fill's figures, the raw JSON's size, and the first project's leads
/// (`(index in the data set, lead id)`, in order).
async fn fill(
    server: &Server,
    keys: Arc<Vec<String>>,
    leads: u64,
) -> Result<(load::Stats, u64, Arc<Vec<(u64, i64)>>), Failure> {
    println!("filling {leads} leads ...");
    let raw_json = Arc::new(AtomicU64::new(0));
    let first_project: Arc<Mutex<HashMap<u64, i64>>> = Arc::default();
    let make = {
        let raw_json = Arc::clone(&raw_json);
        Arc::new(move |n: u64| {
            let body = data::lead(n).to_string().into_bytes();
            raw_json.fetch_add(body.len() as u64, Ordering::Relaxed);
            Call {
                method: "POST",
                path: "/api/leads/createServerSideLead".to_owned(),
                headers: vec![("x-api-key", keys[project_of(n)].clone())],
                body: Some(body),
            }
        })
    };
    let inspect = {
        let first_project = Arc::clone(&first_project);
        Arc::new(move |n: u64, body: &[u8]| {
            if project_of(n) == 0 {
                let id = serde_json::from_slice::<Value>(body)
                    .ok()
                    .and_then(|v| v["leadId"].as_i64());
                if let (Some(id), Ok(mut ids)) = (id, first_project.lock()) {
                    ids.insert(n, id);
                }
            }
        })
    };
    let until = Until::Count(leads);
    let fill = load::run(server.addr, 64, until, 201, make, Some(inspect)).await;
    check("createServerSideLead (filling)", &fill)?;
    let mut first: Vec<(u64, i64)> = first_project
        .lock()
        .map_err(|_| "a poisoned lock")?
        .drain()
        .collect();
    first.sort_unstable();
    Ok((fill, raw_json.load(Ordering::Relaxed), Arc::new(first)))
}

/// Measures each chosen route at each connection count, printing a line per row, beside
/// the hog when `--hog` asks for one.
async fn measure(
    args: &Args,
    server: &Server,
    context: &Context,
    (connections, duration): (&[usize], Duration),
) -> Result<Vec<Row>, Failure> {
    let mut rows: Vec<Row> = Vec::new();
    let chosen = |route: &str| {
        route.starts_with("static")
            || args
                .routes
                .as_ref()
                .is_none_or(|wanted| wanted.iter().any(|w| route.contains(w.as_str())))
    };
    for scenario in scenarios().into_iter().filter(|s| chosen(s.route)) {
        for &count in connections {
            let make = scenario.call(context);
            let hogging = load::hog(server.addr, args.hog).await;
            let until = Until::Elapsed(duration);
            let stats = load::run(server.addr, count, until, scenario.expect, make, None).await;
            drop(hogging);
            check(scenario.route, &stats)?;
            let (_, peak_rss) = server.memory();
            println!(
                "{:<44} {count:>4} conns  {:>9.0} req/s  p50 {:>8.2} ms  p99 {:>8.2} ms  shed {:.0}%  peak RSS {:.0} MiB",
                scenario.route,
                stats.rate(),
                stats.ms(50.0),
                stats.ms(99.0),
                stats.shed_share() * 100.0,
                peak_rss as f64 / (1024.0 * 1024.0)
            );
            rows.push(Row {
                route: scenario.route,
                connections: count,
                stats,
                peak_rss,
            });
        }
    }
    Ok(rows)
}

/// Fails the run when a request failed, or when none was answered at all (requests shed
/// for overload are answers).
fn check(route: &str, stats: &load::Stats) -> Result<(), Failure> {
    if stats.errors > 0 || stats.ok + stats.shed == 0 {
        return Err(format!(
            "{route}: {} of {} requests failed; the first: {}",
            stats.errors,
            stats.errors + stats.ok + stats.shed,
            stats.first_error.as_deref().unwrap_or("none answered")
        ));
    }
    Ok(())
}

/// What a scenario's requests need.
struct Context {
    project: String,
    key: String,
    label: String,
    /// The first project's leads: `(index in the data set, lead id)`.
    first: Arc<Vec<(u64, i64)>>,
    /// The next index of a lead not in the data set yet.
    next_new: Arc<AtomicU64>,
    /// The next of `first` to rate.
    next_rated: Arc<AtomicU64>,
}

/// A route measured, and how to make its requests.
struct Scenario {
    route: &'static str,
    expect: u16,
    kind: Kind,
}

enum Kind {
    Get(String),
    GetLeadBy(&'static str),
    Create { browser: bool },
    Rate,
}

fn scenarios() -> Vec<Scenario> {
    let get = |route, expect, path: String| Scenario {
        route,
        expect,
        kind: Kind::Get(path),
    };
    let search = |term: &str| format!("/api/leads/getLeads?search={}", term.to_lowercase());
    vec![
        get(
            "static reply (getLeads without key: 401)",
            401,
            "/api/leads/getLeads".into(),
        ),
        get("getLeads, first page", 200, "/api/leads/getLeads".into()),
        get(
            "getLeads status=open",
            200,
            "/api/leads/getLeads?status=open".into(),
        ),
        get(
            "getLeads search=okafor (3%)",
            200,
            search(data::RARE_SURNAME),
        ),
        get(
            "getLeads search=gmail (50%)",
            200,
            search(data::COMMON_TERM),
        ),
        get(
            "getLeads search=ok (2 characters)",
            200,
            search(&data::RARE_SURNAME[..2]),
        ),
        get(
            "getLeads q=okafor (3%)",
            200,
            format!("/api/leads/getLeads?q={}", data::RARE_SURNAME),
        ),
        get(
            "getLeads q=ada okafor (two words)",
            200,
            format!("/api/leads/getLeads?q=ada+{}", data::RARE_SURNAME),
        ),
        get(
            "getLeads q=ok (2 characters)",
            200,
            format!("/api/leads/getLeads?q={}", &data::RARE_SURNAME[..2]),
        ),
        get(
            "getLeads msclkid[exists] (3%)",
            200,
            "/api/leads/getLeads?msclkid%5Bexists%5D=true".into(),
        ),
        get(
            "getLeads gclid[exists] (25%)",
            200,
            "/api/leads/getLeads?gclid%5Bexists%5D=true".into(),
        ),
        get(
            "getLeads li_fat_id[exists]=false (98%)",
            200,
            "/api/leads/getLeads?li_fat_id%5Bexists%5D=false".into(),
        ),
        get(
            "getLeads form=quote (25%)",
            200,
            "/api/leads/getLeads?form=quote".into(),
        ),
        get(
            "getLeads source=linkedin (first touch)",
            200,
            "/api/leads/getLeads?source=linkedin".into(),
        ),
        get(
            "getLeads medium=email (first touch)",
            200,
            "/api/leads/getLeads?medium=email".into(),
        ),
        get(
            "getLeads campaign=b2b (first touch)",
            200,
            "/api/leads/getLeads?campaign=b2b".into(),
        ),
        Scenario {
            route: "getLead by email",
            expect: 200,
            kind: Kind::GetLeadBy("email"),
        },
        Scenario {
            route: "getLead by phone",
            expect: 200,
            kind: Kind::GetLeadBy("phone"),
        },
        Scenario {
            route: "createLead",
            expect: 201,
            kind: Kind::Create { browser: true },
        },
        Scenario {
            route: "createServerSideLead",
            expect: 201,
            kind: Kind::Create { browser: false },
        },
        Scenario {
            route: "updateLeadStatus (queues a job)",
            expect: 201,
            kind: Kind::Rate,
        },
    ]
}

impl Scenario {
    fn call(&self, context: &Context) -> load::MakeCall {
        let key = context.key.clone();
        let keyed = move || vec![("x-api-key", key.clone())];
        match &self.kind {
            Kind::Get(path) => {
                let (path, unkeyed) = (path.clone(), self.expect == 401);
                Arc::new(move |_| Call {
                    method: "GET",
                    path: path.clone(),
                    headers: if unkeyed { Vec::new() } else { keyed() },
                    body: None,
                })
            }
            &Kind::GetLeadBy(field) => {
                let first = Arc::clone(&context.first);
                Arc::new(move |n| {
                    // A lead of the first project that has the field, picked by `n`.
                    let mut at = (n.wrapping_mul(2_654_435_761) as usize) % first.len().max(1);
                    let value = loop {
                        let (email, phone) = data::identifiers(first[at].0);
                        match (field, phone) {
                            ("phone", Some(phone)) => break phone,
                            ("phone", None) => at = (at + 1) % first.len(),
                            _ => break email,
                        }
                    };
                    Call {
                        method: "GET",
                        path: format!("/api/leads/getLead?{field}={}", query(&value)),
                        headers: keyed(),
                        body: None,
                    }
                })
            }
            &Kind::Create { browser } => {
                let (project, next) = (context.project.clone(), Arc::clone(&context.next_new));
                Arc::new(move |_| {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let mut body = data::lead(n);
                    let (path, headers) = if browser {
                        body["projectId"] = json!(project);
                        ("/api/leads/createLead", Vec::new())
                    } else {
                        ("/api/leads/createServerSideLead", keyed())
                    };
                    Call {
                        method: "POST",
                        path: path.to_owned(),
                        headers,
                        body: Some(body.to_string().into_bytes()),
                    }
                })
            }
            Kind::Rate => {
                let (first, next) = (Arc::clone(&context.first), Arc::clone(&context.next_rated));
                let label = context.label.clone();
                Arc::new(move |_| {
                    let at = next.fetch_add(1, Ordering::Relaxed) as usize;
                    // Past the last open lead it rates the first again, which answers 409
                    // and fails the run: the data set is large enough for every run.
                    let (_, id) = first[at % first.len().max(1)];
                    Call {
                        method: "POST",
                        path: "/api/leads/updateLeadStatus".to_owned(),
                        headers: keyed(),
                        body: Some(
                            json!({"leadId": id, "conversionId": label})
                                .to_string()
                                .into_bytes(),
                        ),
                    }
                })
            }
        }
    }
}

/// Prints the table and writes the JSON.
#[allow(clippy::too_many_arguments)]
fn report(
    args: &Args,
    leads: u64,
    fill: &load::Stats,
    raw_json: u64,
    filled_size: u64,
    final_size: u64,
    (rss, peak): (u64, u64),
    rows: &[Row],
) -> Result<(), Failure> {
    let ceiling = |connections: usize| {
        rows.iter()
            .find(|row| row.connections == connections && row.route.starts_with("static"))
            .map_or(0.0, |row| row.stats.rate())
    };
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!();
    println!("| route | connections | req/s | of the ceiling | p50 ms | p99 ms | shed (503) |");
    println!("|---|---|---|---|---|---|---|");
    let mut measured = Vec::new();
    for row in rows {
        let share = row.stats.rate() / ceiling(row.connections).max(1.0) * 100.0;
        println!(
            "| {} | {} | {:.0} | {:.0}% | {:.2} | {:.2} | {:.0}% |",
            row.route,
            row.connections,
            row.stats.rate(),
            share,
            row.stats.ms(50.0),
            row.stats.ms(99.0),
            row.stats.shed_share() * 100.0
        );
        measured.push(json!({
            "route": row.route,
            "connections": row.connections,
            "requestsPerSecond": row.stats.rate(),
            "shareOfCeiling": share / 100.0,
            "p50Ms": row.stats.ms(50.0),
            "p99Ms": row.stats.ms(99.0),
            "requests": row.stats.ok,
            "shed": row.stats.shed,
            "peakRssBytesSoFar": row.peak_rss,
        }));
    }
    println!();
    println!(
        "data set: {leads} leads, raw JSON {:.1} MiB; database {:.1} MiB after filling \
         ({:.2}x the raw JSON), {:.1} MiB at the end",
        mib(raw_json),
        mib(filled_size),
        filled_size as f64 / raw_json.max(1) as f64,
        mib(final_size)
    );
    println!(
        "server memory: {:.1} MiB resident at the end, {:.1} MiB at its peak",
        mib(rss),
        mib(peak)
    );
    let results = json!({
        "quick": args.quick,
        "leads": leads,
        "fill": {"requestsPerSecond": fill.rate(), "p50Ms": fill.ms(50.0), "p99Ms": fill.ms(99.0), "connections": 64},
        "rawJsonBytes": raw_json,
        "databaseBytesAfterFill": filled_size,
        "databaseBytesAtEnd": final_size,
        "rssBytes": rss,
        "peakRssBytes": peak,
        "routes": measured,
    });
    if let Some(parent) = args.json.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(&args.json, format!("{results:#}\n")).map_err(|e| e.to_string())?;
    println!("results written to {}", args.json.display());
    Ok(())
}
