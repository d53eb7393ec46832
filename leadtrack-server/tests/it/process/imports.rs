//! Leads from elsewhere, as an operator brings them: `lead import` of a 100,000-row CSV
//! file with bad rows and duplicates, its dates read back through the API, and the same
//! file imported twice; `inbound create` printing the webhook's URL last with its secret
//! sealed in the database. On SQLite, or PostgreSQL with `LEADTRACK_TEST_BACKEND=postgres`.
//! How fast such a file goes in is the benchmark's to measure (`loadgen --import`,
//! docs/performance.md).
//!
//! The big import is ignored by default, and `.ci/run` runs it on its own: its minutes of
//! full load would starve the process tests that run beside it and time their servers.

use std::fmt::Write as _;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::process::binary::{
    admin, admin_json, admin_ok, admin_with_input, create_acme, create_label, fresh_db, get_json,
    page, sign_in, start,
};

/// The rows repeated at the file's end (rows 100 to 149 again).
const REPEATED: usize = 50;

/// Rows of the file, before its duplicates.
const DISTINCT: usize = 100_000 - REPEATED;

/// The creation time of row `i`: one a minute from the start of 2025.
fn created(i: usize) -> DateTime<Utc> {
    "2025-01-01T00:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::minutes(i as i64)
}

/// Whether row `i` has a date nobody can read: ten rows of the file.
fn is_bad(i: usize) -> bool {
    i % 10_000 == 5
}

/// The CSV file: a header with a `Date` column (mapped on the command line), the distinct
/// rows, then [`REPEATED`] of them again.
fn csv_file() -> String {
    let mut file = String::from("email,firstName,Date,uniqueEventId,Notes\n");
    let rows = (0..DISTINCT).chain(100..100 + REPEATED);
    for i in rows {
        let date = if is_bad(i) {
            "yesterday".to_owned()
        } else {
            created(i).format("%Y-%m-%d %H:%M:%S").to_string()
        };
        let event = if i % 2 == 0 {
            format!("ev-{i}")
        } else {
            String::new()
        };
        writeln!(
            file,
            "lead{i}@example.com,Lead {i},{date},{event},\"row {i}, kept\""
        )
        .unwrap();
    }
    file
}

#[tokio::test]
#[ignore = "a minute of full load: .ci/run runs it alone (cargo test --workspace --test server -- --ignored process::imports::)"]
async fn a_hundred_thousand_rows_keep_their_dates_skip_bad_rows_and_come_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let path = dir.path().join("past-leads.csv");
    std::fs::write(&path, csv_file()).unwrap();
    let import = [
        "lead",
        "import",
        "--project",
        "acme",
        path.to_str().unwrap(),
        "--map",
        "createdAt=Date",
        "--json",
    ];

    let outcome = admin_json(&db, &import).await;
    let bad: Vec<Value> = (0..DISTINCT)
        .filter(|i| is_bad(*i))
        .map(|i| json!({"line": i + 2, "reason": "createdAt \"yesterday\" is not a date (2026-03-15T10:30:00Z, 2026-03-15 10:30:00 or 15.03.2026 10:30)"}))
        .collect();
    assert_eq!(
        outcome,
        json!({"imported": DISTINCT - bad.len(), "duplicates": REPEATED, "bad": bad})
    );

    // The same file again adds nothing, and is no failure.
    let again = admin_json(&db, &import).await;
    assert_eq!(
        again,
        json!({"imported": 0, "duplicates": DISTINCT - bad.len() + REPEATED, "bad": bad})
    );

    let server = start(&db).await;
    let http = reqwest::Client::new();
    for i in [0, 1, 150, DISTINCT / 2 + 1, DISTINCT - 1] {
        let url = format!(
            "{}/api/leads/getLead?email=lead{i}@example.com",
            server.base_url
        );
        let lead = get_json(&http, &url, &key).await["lead"].clone();
        assert_eq!(
            lead["createdAt"],
            created(i).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "row {i}: {lead}"
        );
        assert_eq!(lead["userData"]["firstName"], format!("Lead {i}"));
        assert_eq!(lead["formData"]["Notes"], format!("row {i}, kept"));
        assert_eq!(lead["status"], "open");
    }
    let url = format!("{}/api/leads/getLeads?limit=1", server.base_url);
    let page = get_json(&http, &url, &key).await;
    assert_eq!(page["total"], DISTINCT - bad.len(), "{page}");
    // Bad rows are not leads.
    let url = format!(
        "{}/api/leads/getLead?email=lead5@example.com",
        server.base_url
    );
    let missing = http
        .get(url)
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn a_file_with_no_lead_in_it_fails_with_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    create_acme(&db).await;
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, "email,createdAt\n,2025-01-01\nx@example.com,soon\n").unwrap();
    let output = admin(
        &db,
        &[
            "lead",
            "import",
            "--project",
            "acme",
            path.to_str().unwrap(),
        ],
    )
    .await;
    assert!(!output.status.success());
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        out.starts_with(
            "line 2: At least one of userData or attributionData must contain data\n\
             line 3: createdAt \"soon\" is not a date"
        ),
        "{out}"
    );
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("no lead was imported from bad.csv"), "{err}");

    // A mapping to a column the file lacks is refused before anything is read.
    let output = admin(
        &db,
        &[
            "lead",
            "import",
            "--project",
            "acme",
            path.to_str().unwrap(),
            "--map",
            "phone=Tel",
        ],
    )
    .await;
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains(
            "phone is mapped from \"Tel\", which is not a column; the columns are email, createdAt"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn an_inbound_webhook_prints_its_url_last_and_keeps_its_secret_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leads.db");
    create_acme(&db).await;
    const SECRET: &str = "typeform-secret-known-to-the-test-81f3";
    let output = admin_ok(
        &db,
        &[
            "inbound",
            "create",
            "--project",
            "acme",
            "--preset",
            "typeform",
            "--secret",
            SECRET,
            "--map",
            "companyName=$.form_response.hidden.company",
            "--public-url",
            "https://leads.example.com/",
        ],
    )
    .await;
    let out = String::from_utf8_lossy(&output.stdout);
    let url = out.lines().last().unwrap();
    let id = url
        .strip_prefix("https://leads.example.com/webhooks/inbound/")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(id.len(), 32, "{out}");
    let mut bytes = std::fs::read(&db).unwrap();
    bytes.extend(std::fs::read(db.with_extension("db-wal")).unwrap_or_default());
    assert!(
        !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
        "the secret is in the database file"
    );

    let listed = admin_json(&db, &["inbound", "list", "--project", "acme", "--json"]).await;
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["preset"], "typeform");
    let mapping = listed[0]["mapping"].as_array().unwrap();
    assert!(mapping.contains(&json!("companyName=$.form_response.hidden.company")));
    assert!(mapping.contains(&json!("formName=$.form_response.definition.title")));
    assert!(!listed.to_string().contains(SECRET));

    // An unsigned tool's URL carries its secret.
    let output = admin_ok(
        &db,
        &[
            "inbound",
            "create",
            "--project",
            "acme",
            "--preset",
            "jotform",
            "--secret",
            "jot-secret",
        ],
    )
    .await;
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(
        out.lines().last().unwrap().ends_with("?secret=jot-secret"),
        "{out}"
    );

    // A path that is not JSONPath is refused, and nothing is made.
    let output = admin(
        &db,
        &[
            "inbound",
            "create",
            "--project",
            "acme",
            "--preset",
            "custom",
            "--map",
            "email=$.a[",
        ],
    )
    .await;
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a JSONPath"));
    admin_ok(&db, &["inbound", "remove", "--project", "acme", id]).await;
    let listed = admin_json(&db, &["inbound", "list", "--project", "acme", "--json"]).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn day_first_dates_are_read_as_the_file_shows_or_as_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let import = |path: &std::path::Path, order: &'static str| {
        let path = path.to_str().unwrap().to_owned();
        let db = db.clone();
        async move {
            let args = [
                "lead",
                "import",
                "--project",
                "acme",
                &path,
                "--date-format",
                order,
                "--map",
                "createdAt=Datum",
                "--json",
            ];
            admin(&db, &args).await
        }
    };
    // A German export: the dots and a day over 12 say it; every row follows.
    let german = dir.path().join("german.csv");
    std::fs::write(
        &german,
        "E-Mail;Datum\na@example.com;05.06.2025 14:30\nb@example.com;25.06.2025\n",
    )
    .unwrap();
    let output = import(&german, "auto").await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // A file that could be either is refused in words, and read as chosen.
    let either = dir.path().join("either.csv");
    std::fs::write(&either, "email,Datum\nc@example.com,07/08/2025\n").unwrap();
    let refused = import(&either, "auto").await;
    assert!(!refused.status.success());
    let said: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(
        said["bad"][0]["reason"],
        "createdAt \"07/08/2025\" could be 7 August or 8 July 2025: say whether the day or \
         the month comes first"
    );
    let chosen = import(&either, "month-first").await;
    assert!(chosen.status.success());
    let wrong = admin(
        &db,
        &[
            "lead",
            "import",
            "--project",
            "acme",
            "x.csv",
            "--date-format",
            "iso",
        ],
    )
    .await;
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("use auto, day-first or month-first"));

    let server = start(&db).await;
    let http = reqwest::Client::new();
    for (email, created) in [
        ("a@example.com", "2025-06-05T14:30:00.000Z"),
        ("b@example.com", "2025-06-25T00:00:00.000Z"),
        ("c@example.com", "2025-07-08T00:00:00.000Z"),
    ] {
        let url = format!("{}/api/leads/getLead?email={email}", server.base_url);
        let lead = get_json(&http, &url, &key).await["lead"].clone();
        assert_eq!(lead["createdAt"], created, "{email}");
    }
}

/// Ad spend as an operator brings it: `spend import` of a file with a bad row, the same
/// day and campaign imported again replacing it, `project set --fx` for a row in dollars,
/// `spend list`, and a real server's `GET /api/reports/roas` meeting the spend with a lead
/// of its campaign.
#[tokio::test]
async fn spend_from_a_file_meets_its_leads_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let today = Utc::now().date_naive();
    let path = dir.path().join("spend.csv");
    let file = format!(
        "date,source,medium,campaign,cost,currency,clicks\n\
         {today},facebook,paid_social,Spring Sale,100.00,,40\n\
         {today},newsletter,email,May issue,50,USD,\n\
         yesterday,google,cpc,Brand,10,,\n"
    );
    std::fs::write(&path, file).unwrap();
    let import = [
        "spend",
        "import",
        "--project",
        "acme",
        path.to_str().unwrap(),
        "--json",
    ];
    let outcome = admin_json(&db, &import).await;
    assert_eq!(
        outcome,
        json!({"imported": 2, "bad": [{"line": 4, "reason": "the date \"yesterday\" is not YYYY-MM-DD"}]})
    );
    // The same day and campaign again (as Facebook's other name) replaces it.
    let again =
        format!("date,source,medium,campaign,cost\n{today},fb,paid_social,spring sale,120\n");
    std::fs::write(&path, again).unwrap();
    admin_json(&db, &import).await;
    admin_ok(
        &db,
        &["project", "set", "--project", "acme", "--fx", "USD=0.9"],
    )
    .await;

    let listed = admin_json(&db, &["spend", "list", "--project", "acme", "--json"]).await;
    let rows: Vec<(Value, Value, Value, Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].clone(),
                r["campaign"].clone(),
                r["cost"].clone(),
                r["currency"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                json!("meta"),
                json!("spring sale"),
                json!(120.0),
                json!("EUR")
            ),
            (
                json!("newsletter"),
                json!("May issue"),
                json!(50.0),
                json!("USD")
            ),
        ]
    );

    let server = start(&db).await;
    let http = reqwest::Client::new();
    let lead = json!({"userData": {"email": "ada@example.com"},
        "attributionData": {"utm_source": "facebook", "utm_medium": "paid_social", "utm_campaign": "Spring Sale"}});
    let created = http
        .post(format!(
            "{}/api/leads/createServerSideLead",
            server.base_url
        ))
        .header("x-api-key", &key)
        .json(&lead)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let url = format!("{}/api/reports/roas?groupBy=source", server.base_url);
    let report = get_json(&http, &url, &key).await;
    let rows: Vec<(Value, Value, Value, Value)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].clone(),
                r["spend"].clone(),
                r["leads"].clone(),
                r["costPerLead"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (json!("meta"), json!(120.0), json!(1), json!(120.0)),
            (json!("newsletter"), json!(45.0), json!(0), json!(null)),
        ]
    );
    assert_eq!(report["rates"], json!({"USD": 0.9}));
    assert_eq!(report["totals"]["spend"], 165.0);
}

/// The known numbers end to end: 1,000.00 of spend imported on a campaign whose 40
/// leads, sent through the API, hold 8 rated Qualified and 2 rated Customer at 1,500.00
/// each. The API and the reports page both answer 25.00 a lead, 100.00 a qualified lead,
/// 500.00 a customer and a ROAS of 3.
#[tokio::test]
async fn a_campaigns_costs_and_roas_are_the_same_through_the_api_and_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    let key = create_acme(&db).await;
    let qualified = create_label(&db, "Qualified", &[]).await;
    let customer = create_label(&db, "Customer", &["--mark-as-done"]).await;
    let today = Utc::now().date_naive();
    let path = dir.path().join("spend.csv");
    let file = format!(
        "date,source,medium,campaign,cost\n{today},facebook,paid_social,Spring Sale,1000.00\n"
    );
    std::fs::write(&path, file).unwrap();
    let import = [
        "spend",
        "import",
        "--project",
        "acme",
        path.to_str().unwrap(),
    ];
    admin_ok(&db, &import).await;
    let user = [
        "user",
        "create",
        "--email",
        "ada@example.com",
        "--password-stdin",
    ];
    let created = admin_with_input(&db, &user, "ada's long password\n").await;
    assert!(created.status.success());
    let member = [
        "member",
        "add",
        "--project",
        "acme",
        "--email",
        "ada@example.com",
    ];
    admin_ok(&db, &[&member[..], &["--role", "viewer"]].concat()).await;

    let server = start(&db).await;
    let http = reqwest::Client::new();
    let api = |route: &str| format!("{}/api/leads/{route}", server.base_url);
    for n in 0..40 {
        let lead = json!({"userData": {"email": format!("p{n}@example.com")},
            "attributionData": {"utm_source": "facebook", "utm_medium": "paid_social", "utm_campaign": "Spring Sale"}});
        let sent = http
            .post(api("createServerSideLead"))
            .header("x-api-key", &key);
        assert_eq!(sent.json(&lead).send().await.unwrap().status(), 201);
    }
    for n in 0..10 {
        let rating = match n {
            0 | 1 => {
                json!({"email": format!("p{n}@example.com"), "conversionId": customer, "price": 150_000})
            }
            _ => json!({"email": format!("p{n}@example.com"), "conversionId": qualified}),
        };
        let sent = http.post(api("updateLeadStatus")).header("x-api-key", &key);
        assert_eq!(sent.json(&rating).send().await.unwrap().status(), 201);
    }

    let url = format!("{}/api/reports/roas?groupBy=campaign", server.base_url);
    let report = get_json(&http, &url, &key).await;
    assert_eq!(
        report["rows"],
        json!([{"source": "meta", "campaign": "Spring Sale", "campaignId": null, "label": null,
            "spend": 1000.0, "currency": "EUR", "clicks": null, "leads": 40, "qualified": 10,
            "customers": 2, "value": 3000.0, "costPerLead": 25.0, "costPerQualified": 100.0,
            "costPerCustomer": 500.0, "roas": 3.0}])
    );
    let (_, cookie) = sign_in(&server, "ada@example.com", "ada's long password").await;
    let (status, _, html) = page(&server, "/projects/acme/reports", &cookie.unwrap()).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    for shown in [
        "<dt>Spend (EUR)</dt><dd>1,000.00</dd>",
        "<dt>Cost per lead</dt><dd>25.00</dd>",
        "<dt>Cost per customer</dt><dd>500.00</dd>",
        "<dt>ROAS</dt><dd>3.00×</dd>",
        "<td class=\"num\" data-label=\"Cost per qualified lead\">100.00</td>",
    ] {
        assert!(html.contains(shown), "{shown}");
    }
}

/// `spend connect` names the account a platform's spend is read from; `spend sync` reads
/// it, and without the server's application for the platform says so for that source and
/// fails; `spend disconnect` stops it.
#[tokio::test]
async fn a_spend_source_is_connected_synced_and_disconnected() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(&dir).await;
    create_acme(&db).await;
    let connected = admin_ok(
        &db,
        &[
            "spend",
            "connect",
            "meta",
            "--project",
            "acme",
            "--account-id",
            "777",
        ],
    )
    .await;
    let said = String::from_utf8_lossy(&connected.stdout);
    assert!(
        said.contains("meta spend of account 777 is read every hour"),
        "{said}"
    );
    let sync = ["spend", "sync", "--project", "acme", "--json"];
    let output = admin(&db, &sync).await;
    assert!(!output.status.success());
    let reads: Value = serde_json::from_slice(&output.stdout).unwrap();
    let today = Utc::now().date_naive();
    assert_eq!(
        reads,
        json!([{"platform": "meta", "account": "777", "from": today - chrono::Days::new(3),
                "to": today, "rows": null,
                "error": "the server has no Meta application to read spend with (docs/platform-apps.md)"}])
    );
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("the spend of 1 of 1 sources could not be read"),
        "{err}"
    );
    let bad = admin(
        &db,
        &[
            "spend",
            "connect",
            "bing",
            "--project",
            "acme",
            "--account-id",
            "1",
        ],
    )
    .await;
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("use google-ads, meta, microsoft-ads, linkedin or tiktok")
    );
    // TikTok's spend is read with a token of its own, at an address the rule allows.
    let tiktok = |extra: &[&'static str]| {
        let mut args = vec!["spend", "connect", "tiktok", "--project", "acme"];
        args.extend(["--account-id", "7000001"]);
        args.extend(extra);
        args
    };
    let refusals = [
        (
            tiktok(&[]),
            "TikTok spend is read with an access token: add --access-token",
        ),
        (
            tiktok(&["--access-token", "t", "--base-url", "http://10.1.2.3:9"]),
            "--base-url: ",
        ),
    ];
    for (args, said) in refusals {
        let refused = admin(&db, &args).await;
        assert!(!refused.status.success());
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(err.contains(said), "{err}");
    }
    admin_ok(&db, &tiktok(&["--access-token", "tt-token"])).await;
    admin_ok(&db, &["spend", "disconnect", "tiktok", "--project", "acme"]).await;

    admin_ok(&db, &["spend", "disconnect", "meta", "--project", "acme"]).await;
    let none = admin_json(&db, &sync).await;
    assert_eq!(none, json!([]));
    // Days past any calendar are at most a year, not a crash.
    let far = [
        "spend",
        "sync",
        "--project",
        "acme",
        "--days",
        "99999999999",
        "--json",
    ];
    assert_eq!(admin_json(&db, &far).await, json!([]));
    let listed = [
        "spend",
        "list",
        "--project",
        "acme",
        "--to",
        "0001-01-05",
        "--json",
    ];
    assert_eq!(admin_json(&db, &listed).await, json!([]));
}
