//! An existing warp app that mounts the lead routes beside its own.
//!
//! ```sh
//! cargo run --example embed
//! curl http://127.0.0.1:3000/            # the app's own page
//! curl http://127.0.0.1:3000/api/leads/getLeads -H 'X-API-Key: ...'   # leadtrack
//! ```
//!
//! The app keeps its routes and its own 404; leadtrack answers only its seven paths.

use chrono::Utc;
use leadtrack::core::Admin;
use leadtrack::sqlite::SqliteStore;
use warp::Filter;
use warp::http::StatusCode;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let store = SqliteStore::open("embed.db").await?;
    if store.projects().await?.is_empty() {
        let project = store
            .create_project(
                leadtrack::core::project::NewProject {
                    public_id: None,
                    name: "Shop".into(),
                    currency: Some("EUR".into()),
                },
                Utc::now(),
            )
            .await?;
        let key = store.issue_api_key(project.id, Utc::now()).await?;
        println!("project id {} / API key {}", project.public_id, key.key);
    }

    // The host app's own routes...
    let home = warp::path::end().map(|| warp::reply::html("<h1>My shop</h1>"));
    let products = warp::path!("api" / "products").map(|| warp::reply::json(&["tea", "cake"]));
    let not_found =
        warp::any().map(|| warp::reply::with_status("no such page", StatusCode::NOT_FOUND));

    // ...and the lead routes, mounted with `.or`. No `.recover()` is needed for them. The
    // capture script is served too, so the shop's pages can include `/leadtrack.js`.
    let leads = leadtrack::warp::routes(store.clone(), leadtrack::warp::Config::default());
    let app = home
        .or(products)
        .or(leads)
        .or(leadtrack::warp::script())
        .or(not_found);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    warp::serve(app)
        .incoming(listener)
        .graceful(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .run()
        .await;
    store.close().await;
    Ok(())
}
