//! Leads from elsewhere, set up in Settings: form tools' inbound webhooks (made, a sample
//! post tried against the mapping before it is saved, the mapping saved, removed), and a
//! CSV file imported (uploaded, its columns mapped with a preview of its first rows, its
//! progress followed to its outcome, its leads read back with their dates).

use std::time::Duration;

use crate::common::{App, MEMBER_PASSWORD, ORIGIN, OWNER_PASSWORD, Reply, app, browser};
use leadtrack_core::types::LeadIdentifier;
use warp::http::StatusCode;

/// The id of the project's only inbound webhook.
async fn only_hook(app: &App) -> leadtrack_core::inbound::InboundHook {
    let hooks = app.store.inbound_hooks(app.alpha.id).await.unwrap();
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    hooks.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_form_tool_is_added_its_sample_tried_and_its_mapping_saved() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/inbound";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["Form tools", "No inbound webhooks yet.", "Add a form tool"],
    );

    let refused = app.post_form(&owner, path, &[("preset", "zapier")]).await;
    refused.assert_shows(StatusCode::BAD_REQUEST, &["Pick the form tool."]);
    assert!(
        app.store
            .inbound_hooks(app.alpha.id)
            .await
            .unwrap()
            .is_empty()
    );

    let made = app
        .post_form(
            &owner,
            path,
            &[("preset", "tally"), ("name", "Tally: demos")],
        )
        .await;
    let hook = only_hook(&app).await;
    made.assert_shows(
        StatusCode::OK,
        &[
            "The webhook's signing secret.",
            hook.secret.expose(),
            &format!("http://leads.test/webhooks/inbound/{}", hook.id),
            "Tally: demos",
        ],
    );
    assert!(
        !app.get(path, &owner)
            .await
            .text
            .contains(hook.secret.expose())
    );

    // A sample tried: its lead shown, nothing saved.
    let sample = r#"{"data": {"formName": "Demo", "fields": [{"label": "Work email", "type": "INPUT_TEXT", "value": "ada@example.com"}]}}"#;
    let mapping = "email=$.data.fields[?@.label == 'Work email'].value\nformName=$.data.formName";
    let save = format!("{path}/{}", hook.id);
    let tried = app
        .post_form(
            &owner,
            &save,
            &[("mapping", mapping), ("sample", sample), ("action", "try")],
        )
        .await;
    tried.assert_shows(
        StatusCode::OK,
        &[
            "userData.email",
            "ada@example.com",
            "formData.formName",
            "Demo",
        ],
    );
    assert_eq!(only_hook(&app).await.mapping, hook.mapping);

    let broken = app
        .post_form(&owner, &save, &[("mapping", "email=$.data[")])
        .await;
    broken.assert_shows(StatusCode::BAD_REQUEST, &["is not a JSONPath"]);
    assert_eq!(only_hook(&app).await.mapping, hook.mapping);

    let saved = app
        .post_form(&owner, &save, &[("mapping", mapping), ("action", "save")])
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let pairs: Vec<String> = only_hook(&app)
        .await
        .mapping
        .iter()
        .map(|p| format!("{}={}", p.target, p.source))
        .collect();
    assert_eq!(pairs.join("\n"), mapping);

    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    assert_eq!(app.get(path, &member).await.status, StatusCode::FORBIDDEN);

    app.post_form(&owner, &format!("{save}/remove"), &[]).await;
    assert!(
        app.store
            .inbound_hooks(app.alpha.id)
            .await
            .unwrap()
            .is_empty()
    );
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[
            "Set up or changed the inbound webhook Tally: demos",
            "Removed the inbound webhook Tally: demos",
        ],
    );
}

/// Uploads `file` as `past.csv` to the import page, from `owner`'s browser with its token.
async fn upload(app: &App, owner: (&str, &str), file: &str) -> Reply {
    upload_to(app, "/projects/alpha/settings/import", owner, file).await
}

/// Uploads `file` as `past.csv` to `path`, from `owner`'s browser with its token.
async fn upload_to(app: &App, path: &str, (owner, csrf): (&str, &str), file: &str) -> Reply {
    let boundary = "----leadtrackTestBoundary";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"past.csv\"\r\n\
         Content-Type: text/csv\r\n\r\n{file}\r\n--{boundary}--\r\n"
    );
    app.send(
        browser("POST", path)
            .header("origin", ORIGIN)
            .header("cookie", owner)
            .header(
                "content-type",
                &format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body),
    )
    .await
}

#[tokio::test]
async fn a_csv_file_is_mapped_previewed_and_imported_with_its_dates() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/import";
    let csrf = app.get(path, &owner).await.csrf();
    let mut file = String::from("E-mail,firstName,When\n");
    file.push_str(",,2025-02-01\n");
    for i in 0..30 {
        file.push_str(&format!(
            "lead{i}@example.com,Lead {i},2025-02-{:02} 09:30\n",
            i % 28 + 1
        ));
    }

    let refused = upload(&app, (&owner, &csrf), "not,a,lead\n1,2,3\n").await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &["No column is mapped to a lead field."],
    );

    let uploaded = upload(&app, (&owner, &csrf), &file).await;
    assert_eq!(uploaded.status, StatusCode::SEE_OTHER, "{}", uploaded.text);
    let page_path = uploaded.header("location").unwrap().to_owned();
    assert!(page_path.starts_with("/projects/alpha/settings/import/"));
    // Another project's owner path does not reach it.
    let other = page_path.replace("/alpha/", "/beta/");
    assert_eq!(app.get(&other, &owner).await.status, StatusCode::NOT_FOUND);

    let page = app.get(&page_path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "past.csv",
            "31 rows",
            "Map the columns",
            "Import 31 rows",
            "Lead 0",
        ],
    );
    // Mapped by hand: the email column, and the dates.
    let picked = [
        ("map-email", "E-mail"),
        ("map-createdAt", "When"),
        ("map-firstName", "firstName"),
    ];
    let mut pairs = picked.to_vec();
    pairs.push(("action", "preview"));
    app.post_form(&owner, &page_path, &pairs).await;
    let page = app.get(&page_path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "lead0@example.com",
            "At least one of userData or attributionData must contain data.",
            "2025-02-01",
        ],
    );

    let mut pairs = picked.to_vec();
    pairs.push(("action", "import"));
    let started = app.post_form(&owner, &page_path, &pairs).await;
    assert_eq!(started.status, StatusCode::SEE_OTHER);
    let mut done = app.get(&page_path, &owner).await;
    for _ in 0..100 {
        if done.text.contains("done-title") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        done = app.get(&page_path, &owner).await;
    }
    done.assert_shows(
        StatusCode::OK,
        &[
            "<strong>30</strong> leads imported · 0 already there · 1 bad row skipped.",
            "Bad rows",
        ],
    );
    assert!(
        done.text.contains("<span class=\"cell\">2</span>"),
        "line 2 is listed"
    );

    let lead = app
        .store
        .find_lead(
            app.alpha.id,
            &LeadIdentifier::Email("lead3@example.com".to_owned()),
        )
        .await
        .unwrap();
    assert_eq!(lead.created_at.to_rfc3339(), "2025-02-04T09:30:00+00:00");
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &["Imported 30 leads from past.csv (0 already there, 1 bad rows)"],
    );
}

/// A file exported in German is mapped without a hand: its Vorname, Nachname, E-Mail,
/// Telefon and Firma columns are picked for the fields, which the page names as people do.
#[tokio::test]
async fn a_files_headers_in_another_language_are_mapped_and_fields_named_for_people() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/import";
    let csrf = app.get(path, &owner).await.csrf();
    let file = "Vorname;Nachname;E-Mail;Telefon;Firma\nAda;Lovelace;ada@example.com;+49 30 1234;Analytical GmbH\n";
    let uploaded = upload(&app, (&owner, &csrf), file).await;
    assert_eq!(uploaded.status, StatusCode::SEE_OTHER, "{}", uploaded.text);
    let page = app.get(uploaded.header("location").unwrap(), &owner).await;
    for (field, name, column) in [
        ("firstName", "First name", "Vorname"),
        ("lastName", "Last name", "Nachname"),
        ("email", "Email", "E-Mail"),
        ("phone", "Phone", "Telefon"),
        ("companyName", "Company", "Firma"),
    ] {
        let label = format!("<label for=\"map-{field}\">{name}</label>");
        assert!(page.text.contains(&label), "{label}");
        let picker = page
            .text
            .split(&format!("id=\"map-{field}\""))
            .nth(1)
            .unwrap();
        let picker = &picker[..picker.find("</select>").unwrap()];
        let picked = format!("<option value=\"{column}\" selected>");
        assert!(picker.contains(&picked), "{field}: {picker}");
    }
    assert!(page.text.contains("<label for=\"map-gclid\">gclid</label>"));
}

#[tokio::test]
async fn dates_that_could_be_either_are_refused_until_the_order_is_chosen() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let csrf = app
        .get("/projects/alpha/settings/import", &owner)
        .await
        .csrf();
    let file = "email,createdAt\nada@example.com,07/08/2025 10:30\n";
    let uploaded = upload(&app, (&owner, &csrf), file).await;
    let page_path = uploaded.header("location").unwrap().to_owned();
    let page = app.get(&page_path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<label for=\"date_order\">Dates like 05/06/2026</label>",
            "<option value=\"auto\" selected>As the file shows",
            "CreatedAt &#34;07/08/2025 10:30&#34; could be 7 August or 8 July 2025: say whether the day or the month comes first.",
        ],
    );
    let picked = [
        ("map-email", "email"),
        ("map-createdAt", "createdAt"),
        ("date_order", "day-first"),
        ("action", "preview"),
    ];
    app.post_form(&owner, &page_path, &picked).await;
    let page = app.get(&page_path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<option value=\"day-first\" selected>Day first",
            "2025-08-07 10:30",
        ],
    );
}

/// Ad spend from a file in the dashboard: a file with a bad row is refused whole, naming
/// the line; a good one is kept (a row of the same day and campaign replacing the one
/// before) and listed; the currency rates are saved, or refused with what was typed; the
/// page is the owners'.
#[tokio::test]
async fn spend_is_imported_from_a_file_and_its_rates_are_set() {
    let app = app().await;
    let owner = app.session("owner@example.com", OWNER_PASSWORD).await;
    let path = "/projects/alpha/settings/spend";
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Import spend from a CSV file",
            "No spend yet in the last 30 days.",
        ],
    );
    let csrf = page.csrf();
    let today = chrono::Utc::now().date_naive();
    let header = "date,source,medium,campaign,cost,currency,clicks";
    let bad = format!(
        "{header}\n{today},google,cpc,Brand,12.50,,40\n{today},meta,paid_social,Spring,abc,,\n"
    );
    let refused = upload_to(&app, path, (&owner, &csrf), &bad).await;
    refused.assert_shows(
        StatusCode::BAD_REQUEST,
        &[
            "One row is not spend, so nothing was imported",
            "Line 3: the cost &#34;abc&#34; is not an amount (1234.56)",
        ],
    );
    let kept = |app: &App| {
        let store = app.store.clone();
        let project = app.alpha.id;
        async move { store.spend(project, today, today).await.unwrap() }
    };
    assert!(kept(&app).await.is_empty(), "nothing of a refused file");

    let good = format!(
        "{header}\n{today},google,cpc,Brand,12.50,,40\n{today},facebook,paid_social,Spring,99,EUR,\n"
    );
    let imported = upload_to(&app, path, (&owner, &csrf), &good).await;
    assert_eq!(imported.status, StatusCode::SEE_OTHER, "{}", imported.text);
    assert_eq!(
        imported.header("location"),
        Some("/projects/alpha/settings/spend?saved=imported")
    );
    let again = format!("{header}\n{today},Google,cpc,brand,20,,50\n");
    upload_to(&app, path, (&owner, &csrf), &again).await;
    let rows: Vec<(String, i64)> = kept(&app)
        .await
        .iter()
        .map(|r| (r.source.clone(), r.cost_micros))
        .collect();
    assert_eq!(
        rows,
        [
            ("google".to_owned(), 20_000_000),
            ("meta".to_owned(), 99_000_000)
        ]
    );
    let page = app.get(&format!("{path}?saved=imported"), &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "Spend imported.",
            "<td class=\"num\" data-label=\"Cost\">20.00 USD</td>",
            "99.00 EUR",
        ],
    );

    let wrong = app
        .post_form(
            &owner,
            &format!("{path}/rates"),
            &[("rates", "EUR=1.08 GBP")],
        )
        .await;
    wrong.assert_shows(
        StatusCode::BAD_REQUEST,
        &[
            "&#34;GBP&#34; is not CURRENCY=RATE (EUR=1.08).",
            "value=\"EUR=1.08 GBP\"",
        ],
    );
    let saved = app
        .post_form(
            &owner,
            &format!("{path}/rates"),
            &[("rates", "eur=1.08, GBP=1.27")],
        )
        .await;
    assert_eq!(
        saved.header("location"),
        Some("/projects/alpha/settings/spend?saved=rates")
    );
    assert_eq!(
        app.store.fx_rates(app.alpha.id).await.unwrap().written(),
        "EUR=1.08 GBP=1.27"
    );
    let audit = app.get("/projects/alpha/settings/audit", &owner).await;
    audit.assert_shows(
        StatusCode::OK,
        &[
            "Imported 2 rows of ad spend from past.csv (0 bad rows)",
            "Set the currency rates EUR=1.08 GBP=1.27",
        ],
    );

    // The platforms' accounts spend is read from, with how the last read went.
    use leadtrack_core::spend::SpendPlatform;
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &["server spend connect google-ads --project alpha"],
    );
    use leadtrack_core::spend::SpendSource;
    let (google, meta) = (SpendPlatform::GoogleAds, SpendPlatform::Meta);
    for source in [
        SpendSource::new(google, "1234567890"),
        SpendSource::new(meta, "777"),
    ] {
        app.store
            .set_spend_source(app.alpha.id, &source)
            .await
            .unwrap();
    }
    let at = chrono::DateTime::parse_from_rfc3339("2026-03-01T09:30:00Z")
        .unwrap()
        .to_utc();
    let failed = Some("Meta answered HTTP 400: (#100) Invalid account");
    app.store
        .record_spend_sync(app.alpha.id, meta, at, failed)
        .await
        .unwrap();
    let page = app.get(path, &owner).await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "<strong>Google Ads</strong> account 1234567890: Not read yet: it is read every hour.",
            "<strong>Meta</strong> account 777: <span class=\"problem\">Not read 1 Mar 2026, 09:30 UTC: Meta answered HTTP 400: (#100) Invalid account.</span>",
        ],
    );

    let member = app.session("member@example.com", MEMBER_PASSWORD).await;
    assert_eq!(app.get(path, &member).await.status, StatusCode::FORBIDDEN);
}
