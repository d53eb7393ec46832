//! Server time of the inbox (its first page, and a filtered and searched page), saving a
//! rating in an inbox row, a lead's page, the reports page (with a year of daily spend of
//! 200 campaigns), the report of what that spend bought, and a CSV export of about 100,000
//! rows, in a project of 1,000,000 leads: `cargo bench -p leadtrack-dashboard
//! --bench dashboard`.
//!
//! Fills a temporary SQLite store through the store API (leads over the last 365 days, with
//! channel paths, labels and ratings), then times `warp::test` requests, which run the
//! whole page or export without a socket. Run without `--bench` (as `cargo test
//! --all-targets` would), it does nothing. `LEADTRACK_BENCH_LEADS` sets the number of
//! leads. `LEADTRACK_BENCH_DB` names a store file to keep: filled on the first run, and
//! timed as it is on later ones (filling a million leads takes minutes).

use std::time::{Duration, Instant};

use chrono::{Datelike, Days, TimeDelta, Utc};
use futures_util::future::join_all;
use leadtrack_core::account::{Actor, NewUser, Password};
use leadtrack_core::label::{LabelMapping, NewLabel};
use leadtrack_core::lead::LeadData;
use leadtrack_core::project::NewProject;
use leadtrack_core::report::Touchpoint;
use leadtrack_core::request::{LeadQuery, StatusUpdate};
use leadtrack_core::roas::{RoasGrouping, RoasQuery};
use leadtrack_core::spend::SpendRow;
use leadtrack_core::types::{ConversionId, LeadIdentifier, LeadStatus, ProjectId, Role};
use leadtrack_core::{Accounts, Admin, LeadStore, Spending};
use leadtrack_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use serde_json::json;
use warp::Filter;
use warp::http::StatusCode;

/// Channel paths the leads came by: `(source, medium, campaign)`, first then last touch.
const CHANNELS: [&str; 8] = [
    r#"[{"ch":{"s":"google","m":"cpc","cm":"brand"}}]"#,
    r#"[{"ch":{"s":"google","m":"cpc","cm":"generic"}},{"ch":{"s":"(direct)","m":"(none)"}}]"#,
    r#"[{"ch":{"s":"facebook","m":"paid_social","cm":"spring"}},{"ch":{"s":"google","m":"cpc","cm":"brand"}}]"#,
    r#"[{"ch":{"s":"newsletter","m":"email","cm":"may"}}]"#,
    r#"[{"ch":{"s":"bing","m":"cpc","cm":"generic"}}]"#,
    r#"[{"ch":{"s":"linkedin","m":"paid_social","cm":"b2b"}},{"ch":{"s":"linkedin","m":"paid_social","cm":"retarget"}}]"#,
    r#"[{"ch":{"s":"google","m":"organic"}}]"#,
    r#"[{"ch":{"s":"partner.example","m":"referral"}}]"#,
];

const WRITES_AT_ONCE: usize = 2_000;

/// The dashboard's routes, as the benchmark requests them.
type Routes = warp::filters::BoxedFilter<(warp::reply::Response,)>;

fn lead_data(n: usize) -> LeadData {
    let channel = (n % 10 < 8).then(|| CHANNELS[n * 7 % CHANNELS.len()].to_owned());
    // Click ids as ads bring them: Google's on 40% of leads, Microsoft's on 3%, LinkedIn's
    // on 2%.
    let click = match n % 100 {
        0..40 => json!({"gclid": format!("G{n}")}),
        40..43 => json!({"msclkid": format!("M{n}")}),
        43..45 => json!({"li_fat_id": format!("L{n}")}),
        _ => json!({}),
    };
    let data = json!({
        "userData": {"firstName": format!("Lead{n}"), "email": format!("lead{n}@example.com")},
        "attributionData": click,
        "formData": {"formName": if n.is_multiple_of(4) { "Quote" } else { "Contact" }, "message": "Hello"}
    });
    LeadData {
        channel_flow: channel,
        ..serde_json::from_value(data).expect("lead data")
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Times saving a rating in an inbox row, as the page's script posts it (the row's form,
/// `Accept: application/json`), on the `open` leads, one save each.
async fn row_saves(
    routes: &Routes,
    cookie: &str,
    label: uuid::Uuid,
    open: &[leadtrack_core::types::LeadId],
) {
    let page = warp::test::request()
        .path("/projects/bench/leads")
        .header("host", "bench.test")
        .header("cookie", cookie)
        .reply(routes)
        .await;
    let html = String::from_utf8_lossy(page.body()).into_owned();
    let field = "name=\"csrf\" value=\"";
    let at = html.find(field).expect("a csrf field") + field.len();
    let csrf = &html[at..at + html[at..].find('"').unwrap()];
    let mut times = Vec::new();
    for id in open {
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("csrf", csrf)
            .append_pair("form", &uuid::Uuid::new_v4().to_string())
            .append_pair("back", "tab=open&page=1")
            .append_pair("conversionId", &label.to_string())
            .append_pair("price", "1,250.00")
            .finish();
        let started = Instant::now();
        let reply = warp::test::request()
            .method("POST")
            .path(&format!("/projects/bench/leads/{id}/rate"))
            .header("host", "bench.test")
            .header("origin", "http://bench.test")
            .header("cookie", cookie)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .reply(routes)
            .await;
        times.push(started.elapsed());
        assert_eq!(reply.status(), StatusCode::OK, "{:?}", reply.body());
    }
    let min = *times.iter().min().unwrap();
    println!(
        "saving a row's rating ({} leads): median {:.1?}, best {min:.1?}",
        times.len(),
        median(times)
    );
}

/// Fills the project with `leads` leads evenly over the last 365 days, oldest first;
/// every 10th rated with one of `labels` and a price, every 20th lost.
async fn fill(store: &SqliteStore, project: ProjectId, labels: &[uuid::Uuid], leads: usize) {
    let now = Utc::now();
    let span = TimeDelta::days(365).num_milliseconds() as f64;
    let oldest = now - TimeDelta::days(365);
    for first in (0..leads).step_by(WRITES_AT_ONCE) {
        let batch = first..(first + WRITES_AT_ONCE).min(leads);
        let created = join_all(batch.clone().map(|n| {
            let at = oldest + TimeDelta::milliseconds((n as f64 / leads as f64 * span) as i64);
            store.create_lead(project, lead_data(n), at)
        }))
        .await;
        let ratings = created.iter().zip(batch).filter_map(|(created, n)| {
            let id = created.as_ref().expect("lead").lead_id;
            let conversion_id = match n % 20 {
                0 | 10 => ConversionId::Label(labels[n / 20 % labels.len()]),
                5 => ConversionId::Lost,
                _ => return None,
            };
            let update = StatusUpdate {
                identifier: LeadIdentifier::LeadId(id),
                conversion_id,
                price: Some((n % 50 + 1) as i64 * 1_000),
                note: None,
            };
            Some(async move {
                store
                    .update_status(project, &update, &Actor::api_key("lt_bench000"), now)
                    .await
                    .expect("rating")
            })
        });
        join_all(ratings).await;
    }
}

/// A member of the project (made one first when `new`), signed in: their session cookie.
async fn sign_in(store: &SqliteStore, project: ProjectId, routes: &Routes, new: bool) -> String {
    let now = Utc::now();
    let password = Password::new("bench password 1").expect("password");
    if new {
        let user = store
            .create_user(
                NewUser::new("bench@example.com", Some("Bench"), &password).unwrap(),
                now,
            )
            .await
            .expect("user");
        store
            .add_member(project, user.id, Role::Member, now)
            .await
            .expect("member");
        // A member whom the owners let export, as the export's step needs.
        store
            .set_export(project, user.id, true)
            .await
            .expect("exports allowed");
    }
    let signed_in = warp::test::request()
        .method("POST")
        .path("/login")
        .header("host", "bench.test")
        .header("origin", "http://bench.test")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("email=bench%40example.com&password=bench+password+1")
        .reply(routes)
        .await;
    signed_in.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

/// Times five `GET`s of `path` as the holder of `cookie`: prints the median and the best,
/// and the answers other than `200` (a page whose read passed the store's time limit
/// answers `503`: a figure too, not a reason to stop).
async fn time(routes: &Routes, cookie: &str, path: &str) {
    let mut times = Vec::new();
    let mut bytes = 0;
    let mut refused = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let reply = warp::test::request()
            .path(path)
            .header("host", "bench.test")
            .header("cookie", cookie)
            .reply(routes)
            .await;
        times.push(started.elapsed());
        if reply.status() != StatusCode::OK {
            refused.push(reply.status().as_u16());
        }
        bytes = reply.body().len();
    }
    let min = *times.iter().min().unwrap();
    let refused = match refused.is_empty() {
        true => String::new(),
        false => format!(", answered {refused:?} of 5"),
    };
    println!(
        "{path}: median {:.1?}, best {min:.1?} ({bytes} bytes{refused})",
        median(times)
    );
}

/// A year of daily spend for 200 campaigns (five of them the leads' own), saved again on
/// each run (a day and campaign's row replaces itself).
async fn spend_of_a_year(store: &SqliteStore, project: ProjectId, today: chrono::NaiveDate) {
    let campaigns: Vec<(&str, String)> = [
        ("google", "brand"),
        ("google", "generic"),
        ("meta", "spring"),
        ("microsoft", "generic"),
        ("linkedin", "b2b"),
    ]
    .iter()
    .map(|(source, name)| (*source, (*name).to_owned()))
    .chain((5..200).map(|n| (["google", "meta", "tiktok"][n % 3], format!("campaign {n}"))))
    .collect();
    let rows: Vec<SpendRow> = (0..366)
        .flat_map(|days| {
            let date = today - Days::new(days);
            campaigns
                .iter()
                .enumerate()
                .map(move |(n, (source, name))| SpendRow {
                    date,
                    source: (*source).to_owned(),
                    medium: "cpc".to_owned(),
                    account: "bench".to_owned(),
                    campaign_id: None,
                    campaign: name.clone(),
                    currency: "EUR".to_owned(),
                    cost_micros: (10 + n as i64) * 1_000_000,
                    clicks: Some(n as u64),
                    impressions: None,
                })
        })
        .collect();
    let started = Instant::now();
    for chunk in rows.chunks(WRITES_AT_ONCE) {
        store.save_spend(project, chunk).await.unwrap();
    }
    println!(
        "saved {} rows of spend in {:.1?}",
        rows.len(),
        started.elapsed()
    );
}

/// The store's report of what 30 days' and a year's spend bought, by campaign (the
/// reports page adds it to the leads' own report), or how it failed (a heavy read past the
/// store's time limit fails).
async fn roas_of_a_year(store: &SqliteStore, project: ProjectId, today: chrono::NaiveDate) {
    for days in [29, 365] {
        let query = RoasQuery {
            from: today - Days::new(days),
            to: today,
            touch: Touchpoint::First,
            by: RoasGrouping::Campaign,
        };
        let mut times = Vec::new();
        let mut said = String::new();
        for _ in 0..5 {
            let started = Instant::now();
            said = match store.roas(project, &query).await {
                Ok(report) => format!("{} campaigns", report.rows.len()),
                Err(err) => format!("failed: {err}"),
            };
            times.push(started.elapsed());
        }
        let days = days + 1;
        println!(
            "what {days} days' spend bought ({said}): median {:.1?}",
            median(times)
        );
    }
}

/// The store in `file` with the project `bench` and its three labels, made when the file
/// is new.
async fn project(file: &std::path::Path) -> (SqliteStore, ProjectId, Vec<uuid::Uuid>) {
    let options = SqliteOptions {
        synchronous: Synchronous::Normal,
        ..SqliteOptions::default()
    };
    let new = !file.exists();
    let store = SqliteStore::open_with(file, options).await.expect("store");
    if !new {
        let project = store.project_by_public_id("bench").await.expect("project");
        let labels = store.labels(project.id).await.expect("labels");
        let labels = labels.iter().map(|label| label.id).collect();
        return (store, project.id, labels);
    }
    let now = Utc::now();
    let new = NewProject {
        public_id: Some("bench".into()),
        name: "Bench".into(),
        currency: Some("EUR".into()),
    };
    let project = store.create_project(new, now).await.expect("project");
    let mut labels = Vec::new();
    for name in ["Qualified", "Customer", "Repeat customer"] {
        let label = NewLabel::done(name, LabelMapping::default());
        let created = store.create_label(project.id, label, now).await;
        labels.push(created.expect("label").id);
    }
    (store, project.id, labels)
}

/// Times the inbox filtered by each filter of its panel alone: a form (25% and 75%,
/// whatever its case, and an older link's exact name), the first touch's source, medium
/// and campaign, the rating, the click ids, and the date presets.
async fn filters(routes: &Routes, cookie: &str, label: uuid::Uuid) {
    let today = Utc::now().date_naive();
    let month = today.with_day(1).unwrap_or(today);
    let label = format!("label={label}");
    let presets: Vec<String> = [today, today - Days::new(6), today - Days::new(29), month]
        .iter()
        .map(|from| format!("from={from}&to={today}"))
        .collect();
    let mut filters = vec![
        "form=quote",
        "form=contact",
        "formName=Quote",
        "source=linkedin",
        "medium=paid_social",
        "campaign=may",
        "tab=lost&label=lost",
        &label,
        "gclid=yes",
        "gclid=no",
        "msclkid=yes",
        "li_fat_id=yes",
    ];
    filters.extend(presets.iter().map(String::as_str));
    for filter in filters {
        time(routes, cookie, &format!("/projects/bench/leads?{filter}")).await;
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let leads: usize = std::env::var("LEADTRACK_BENCH_LEADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("temporary directory");
    let kept = std::env::var_os("LEADTRACK_BENCH_DB").map(std::path::PathBuf::from);
    let file = kept.clone().unwrap_or_else(|| dir.path().join("bench.db"));
    let filled = file.exists();
    let (store, project, labels) = project(&file).await;
    if !filled {
        let started = Instant::now();
        fill(&store, project, &labels, leads).await;
        println!("filled {leads} leads in {:.1?}", started.elapsed());
    }

    let routes =
        leadtrack_dashboard::routes(store.clone(), leadtrack_dashboard::Config::default()).boxed();
    let cookie = sign_in(&store, project, &routes, !filled).await;
    let time = |path: String| {
        let (routes, cookie) = (&routes, &cookie);
        async move { time(routes, cookie, &path).await }
    };
    let today = Utc::now().date_naive();
    time("/projects/bench/leads".into()).await;
    let newest = LeadQuery {
        status: Some(vec![LeadStatus::Open]),
        limit: 25,
        ..LeadQuery::default()
    };
    let open = store.list_leads(project, &newest).await.unwrap().leads;
    let open: Vec<_> = open.iter().map(|lead| lead.id).collect();
    row_saves(&routes, &cookie, labels[1], &open).await;
    // A search that matches one lead in 90 (every lead is called "Lead<n>"), with filters
    // and another sort; and a search for one person.
    time("/projects/bench/leads?search=lead12&formName=Contact&gclid=yes&sort=email:asc".into())
        .await;
    time("/projects/bench/leads?search=lead765432%40example&tab=open".into()).await;
    // The search box (`q`): one person; two words of many leads; two characters every lead
    // holds, and two that one lead in 300 holds (Microsoft click ids from "M7").
    time("/projects/bench/leads?q=lead765432".into()).await;
    time("/projects/bench/leads?q=lead12+example".into()).await;
    time("/projects/bench/leads?q=le".into()).await;
    time("/projects/bench/leads?q=m7".into()).await;
    filters(&routes, &cookie, labels[0]).await;
    time(format!("/projects/bench/leads/{}", leads / 2)).await;
    time("/projects/bench/reports".into()).await;
    time("/projects/bench/reports?touch=last&by=campaign".into()).await;
    let year = format!(
        "/projects/bench/reports?from={}&to={today}",
        today - Days::new(365)
    );
    spend_of_a_year(&store, project, today).await;
    time(year).await;
    roas_of_a_year(&store, project, today).await;

    // An inbox view of about 100,000 open leads: the last 43 days.
    let from = today - Days::new(42);
    let query = LeadQuery {
        status: Some(vec![LeadStatus::Open]),
        created_from: Some(from.and_hms_opt(0, 0, 0).unwrap().and_utc()),
        ..LeadQuery::default()
    };
    let rows = store.list_leads(project, &query).await.unwrap().total;
    println!("the export's view holds {rows} leads");
    time(format!("/projects/bench/leads.csv?tab=open&from={from}")).await;
    store.close().await;
}
