//! Reports and the CSV export over HTTP: who may see them, their exact numbers and rows,
//! and an export longer than one batch.

use crate::common::*;
use chrono::{DateTime, TimeZone, Utc};
use futures_util::future::join_all;
use leadtrack_core::account::Actor;
use leadtrack_core::request::LeadQuery;
use leadtrack_core::request::StatusUpdate;
use leadtrack_core::request::query::{Sort, SortDirection, SortField};
use leadtrack_core::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus};
use serde_json::json;
use warp::http::StatusCode;

fn march(day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, hour, 0, 0).unwrap()
}

/// The member, allowed to export by an owner, signed in: their cookie.
async fn exporter(app: &App) -> String {
    let (project, member) = (app.alpha.id, app.member.id);
    app.store.set_export(project, member, true).await.unwrap();
    app.session("member@example.com", MEMBER_PASSWORD).await
}

/// The rows of the page's report table, each as its cells' text joined by `|`.
fn report_rows(html: &str) -> Vec<String> {
    table_rows(html, "report stack")
}

/// The rows of the page's table of this class, each as its cells' text joined by `|`.
fn table_rows(html: &str, class: &str) -> Vec<String> {
    let start = html
        .find(&format!("<table class=\"{class}\">"))
        .expect("the table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(1)
        .map(|row| {
            let mut cells = Vec::new();
            let mut rest = row;
            while let Some(open) = rest.find("<t") {
                let after = &rest[open..];
                let Some(close) = after.find('>') else { break };
                let tag = &after[..close];
                rest = &after[close + 1..];
                if tag.starts_with("<td") || tag.starts_with("<th") {
                    let end = rest.find("</t").unwrap();
                    cells.push(rest[..end].trim().to_owned());
                    rest = &rest[end..];
                }
            }
            cells.join("|")
        })
        .collect()
}

/// Four leads in March (two rated, one lost, one of nowhere), one after the range, one of
/// another project.
async fn reported(app: &App) {
    let qualified = app.label(&app.alpha, "Qualified").await.id;
    let customer = app.label(&app.alpha, "Customer").await.id;
    let flow =
        r#"[{"ch":{"s":"google","m":"cpc","cm":"spring"}},{"ch":{"s":"(direct)","m":"(none)"}}]"#;
    let google = json!({"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring"});
    let a = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "a@x.io"}, "channelFlow": flow}),
            march(1, 8),
        )
        .await;
    let b = app
        .lead_at(&app.alpha, json!({"attributionData": google}), march(1, 9))
        .await;
    let c = app
        .lead_at(
            &app.alpha,
            json!({"attributionData": {"utm_source": "newsletter", "utm_medium": "email"}}),
            march(2, 10),
        )
        .await;
    app.lead_at(
        &app.alpha,
        json!({"userData": {"email": "d@x.io"}}),
        march(2, 11),
    )
    .await;
    let e = app
        .lead_at(&app.alpha, json!({"attributionData": google}), march(4, 8))
        .await;
    app.lead_at(&app.beta, json!({"attributionData": google}), march(1, 8))
        .await;
    app.rate(&app.alpha, a, ConversionId::Label(customer), Some(120_000))
        .await;
    app.rate(&app.alpha, b, ConversionId::Label(qualified), Some(5_000))
        .await;
    app.rate(&app.alpha, c, ConversionId::Lost, Some(999)).await;
    app.rate(&app.alpha, e, ConversionId::Label(customer), Some(7))
        .await;
}

#[tokio::test]
async fn reports_are_for_members_of_the_project() {
    let app = app().await;
    let visitor = app
        .send(browser("GET", "/projects/alpha/reports?by=source"))
        .await;
    assert_eq!(
        (visitor.status, visitor.header("location")),
        (
            StatusCode::SEE_OTHER,
            Some("/login?next=%2Fprojects%2Falpha%2Freports%3Fby%3Dsource")
        )
    );
    let member = exporter(&app).await;
    let page = app.get("/projects/alpha/reports", &member).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("<h1>Reports</h1>"));
    assert!(page.text.contains("No leads were created in this range."));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    for other in ["/projects/beta/reports", "/projects/nope/reports"] {
        assert_eq!(
            app.get(other, &member).await.status,
            StatusCode::NOT_FOUND,
            "{other}"
        );
    }
    let posted = app
        .send(form("/projects/alpha/reports", "").header("cookie", &member))
        .await;
    assert_eq!(posted.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn the_report_counts_leads_by_channel_and_rating() {
    let app = app().await;
    reported(&app).await;
    let member = exporter(&app).await;
    let page = app
        .get(
            "/projects/alpha/reports?from=2026-03-01&to=2026-03-03&touch=first&by=source_medium",
            &member,
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    // Labels made in the same millisecond come in either order; their columns follow it.
    let labels: Vec<String> = app
        .store
        .labels(app.alpha.id)
        .await
        .unwrap()
        .into_iter()
        .map(|label| label.name)
        .collect();
    let header = format!(
        "Source / medium|Leads|{}|Lost|Any label|Value (USD)",
        labels.join("|")
    );
    // Each label's count with its own conversion rate; Any label, all labels together.
    let share = |count: u32, rate: &str| format!("{count} <span class=\"share\">{rate}</span>");
    let (half, none, quarter) = (share(1, "50.0%"), share(0, "0.0%"), share(1, "25.0%"));
    assert_eq!(
        report_rows(&page.text),
        [
            header,
            format!("google / cpc|2|{half}|{half}|0|100.0%|1,250.00"),
            format!("(not set)|1|{none}|{none}|0|0.0%|0.00"),
            format!("newsletter / email|1|{none}|{none}|1|0.0%|0.00"),
            format!("Total|4|{quarter}|{quarter}|1|50.0%|1,250.00"),
        ]
    );
    for fact in [
        "<dt>Leads</dt><dd>4</dd>",
        "<dt>Rated with a label</dt><dd>2</dd>",
        "<dt>Conversion rate</dt><dd>50.0%</dd>",
        "<dt>Value (USD)</dt><dd>1,250.00</dd>",
    ] {
        assert!(page.text.contains(fact), "{fact}");
    }
    // The charts are images with a name (one small multiple per group of the trend), and
    // their numbers are text too.
    assert_eq!(page.text.matches("role=\"img\"").count(), 2 + 3);
    assert_eq!(
        table_rows(&page.text, "trend"),
        [
            "Day|google / cpc|(not set)|newsletter / email",
            "2026-03-01|2|0|0",
            "2026-03-02|0|1|1",
            "2026-03-03|0|0|0",
        ]
    );
    assert!(
        page.text
            .contains("<h2 id=\"trend-heading\">Leads per day, by source / medium</h2>")
    );
    assert!(page.text.contains(
        "<span class=\"multiple-name\">google / cpc</span> <span class=\"multiple-total\">2</span>"
    ));
    assert!(page.text.contains("<title>2026-03-02: 1</title>"));
    // Per week (1 March 2026 is a Sunday), counting the value, then one label.
    let weekly = app
        .get(
            "/projects/alpha/reports?from=2026-03-01&to=2026-03-03&per=week&show=value",
            &member,
        )
        .await;
    assert_eq!(
        table_rows(&weekly.text, "trend"),
        [
            "Week from|google / cpc|(not set)|newsletter / email",
            "2026-03-01|1,250.00|0.00|0.00",
            "2026-03-02|0.00|0.00|0.00",
        ]
    );
    let customer = app.store.labels(app.alpha.id).await.unwrap();
    let customer = customer.iter().find(|l| l.name == "Customer").unwrap().id;
    let by_label = app
        .get(
            &format!(
                "/projects/alpha/reports?from=2026-03-01&to=2026-03-03&by=source&show={customer}"
            ),
            &member,
        )
        .await;
    assert!(
        by_label
            .text
            .contains("<h2 id=\"trend-heading\">Customer per day, by source</h2>")
    );
    assert_eq!(table_rows(&by_label.text, "trend")[1], "2026-03-01|1|0|0");
    assert!(by_label.text.contains(&format!(
        "<option value=\"{customer}\" selected>Customer</option>"
    )));
    assert!(
        page.text
            .contains("<title id=\"days-title\">Leads and conversions per day")
    );
    assert!(
        page.text
            .contains("<title>2026-03-01: 2 leads, 2 converted</title>")
    );
    assert!(
        page.text.contains(
            "<tr><td>2026-03-02</td><td class=\"num\">2</td><td class=\"num\">0</td></tr>"
        )
    );
    assert!(
        page.text
            .contains(">google / cpc<tspan class=\"bar-value\" dx=\"10\">1,250.00</tspan>")
    );

    let last = app
        .get(
            "/projects/alpha/reports?from=2026-03-01&to=2026-03-03&touch=last&by=source",
            &member,
        )
        .await;
    let (all, nothing) = (share(1, "100.0%"), share(0, "0.0%"));
    let (qualified, customer) = if labels[0] == "Qualified" {
        (format!("{all}|{nothing}"), format!("{nothing}|{all}"))
    } else {
        (format!("{nothing}|{all}"), format!("{all}|{nothing}"))
    };
    assert_eq!(
        report_rows(&last.text)[1..],
        [
            format!("(direct)|1|{customer}|0|100.0%|1,200.00"),
            format!("(not set)|1|{none}|{none}|0|0.0%|0.00"),
            format!("google|1|{qualified}|0|100.0%|50.00"),
            format!("newsletter|1|{none}|{none}|1|0.0%|0.00"),
            format!("Total|4|{quarter}|{quarter}|1|50.0%|1,250.00"),
        ]
    );
    assert!(
        last.text
            .contains("<option value=\"last\" selected>Last touch</option>")
    );
}

#[tokio::test]
async fn the_report_shows_what_the_spend_bought() {
    use leadtrack_core::spend::{FxRates, SpendRow};
    let app = app().await;
    reported(&app).await;
    let member = exporter(&app).await;
    let path = "/projects/alpha/reports?from=2026-03-01&to=2026-03-03";
    let page = app.get(path, &member).await;
    page.assert_shows(StatusCode::OK, &["No ad spend is kept for this range."]);

    let spent = |day: u32, source: &str, campaign: &str, cost: i64, currency: &str| SpendRow {
        date: chrono::NaiveDate::from_ymd_opt(2026, 3, day).unwrap(),
        source: source.into(),
        medium: "cpc".into(),
        account: String::new(),
        campaign_id: None,
        campaign: campaign.into(),
        currency: currency.into(),
        cost_micros: cost * 1_000_000,
        clicks: Some(25),
        impressions: None,
    };
    let spend = [
        spent(1, "google", "Spring", 200, "USD"),
        spent(2, "google", "spring", 100, "USD"),
        spent(2, "linkedin", "ABM", 100, "EUR"),
        spent(3, "bing", "Brand", 10, "GBP"),
    ];
    app.store.save_spend(app.alpha.id, &spend).await.unwrap();
    let rates = FxRates::parse(["EUR=1.5"]).unwrap();
    app.store.set_fx_rates(app.alpha.id, &rates).await.unwrap();
    let page = app.get(path, &member).await;
    assert_eq!(page.status, StatusCode::OK);
    // Google's two leads of the spring campaign (both labels mark leads done): 1,250.00
    // of value for 300.00.
    let rows = table_rows(&page.text, "report stack spend");
    assert!(
        rows[0].starts_with("Campaign|Spend|Clicks|Leads|Qualified|Customers|Value|<abbr title=\"Cost per lead\">CPL</abbr>|"),
        "{}",
        rows[0]
    );
    assert_eq!(
        rows[1..],
        [
            "<a href=\"?from=2026-03-01&#38;to=2026-03-03&#38;touch=first&#38;by=source_medium&#38;per=day&#38;show=leads&#38;spend_by=campaign&#38;spend_trend=google%2Fspring#spend-trend\">spring</a> <span class=\"share\">google</span>|300.00|50|2|2|2|1,250.00|150.00|150.00|150.00|4.17×",
            "<a href=\"?from=2026-03-01&#38;to=2026-03-03&#38;touch=first&#38;by=source_medium&#38;per=day&#38;show=leads&#38;spend_by=campaign&#38;spend_trend=linkedin%2Fabm#spend-trend\">ABM</a> <span class=\"share\">linkedin</span>|150.00|25|0|0|0|0.00|–|–|–|0.00×",
            "<a href=\"?from=2026-03-01&#38;to=2026-03-03&#38;touch=first&#38;by=source_medium&#38;per=day&#38;show=leads&#38;spend_by=campaign&#38;spend_trend=%28not+set%29%2F%28not+set%29#spend-trend\">(not set)</a>|–|–|1|0|0|0.00|–|–|–|–",
            "<a href=\"?from=2026-03-01&#38;to=2026-03-03&#38;touch=first&#38;by=source_medium&#38;per=day&#38;show=leads&#38;spend_by=campaign&#38;spend_trend=newsletter%2F%28not+set%29#spend-trend\">(not set)</a> <span class=\"share\">newsletter</span>|–|–|1|0|0|0.00|–|–|–|–",
            "Total|450.00|75|4|2|2|1,250.00|112.50|225.00|225.00|2.78×",
        ]
        .map(str::to_owned)
    );
    page.assert_shows(
        StatusCode::OK,
        &[
            "<dt>Spend (USD)</dt><dd>450.00</dd>",
            "<dt>ROAS</dt><dd>2.78×</dd>",
            "other currencies converted at EUR=1.5",
            "1 row of spend in GBP is left out",
        ],
    );
    // The same figures per day (a range of three days).
    let days = table_rows(&page.text, "report stack spend periods");
    assert_eq!(
        days[1..],
        [
            "1 Mar 2026|200.00|2|2|1,250.00|100.00|100.00|6.25×",
            "2 Mar 2026|250.00|2|0|0.00|125.00|–|0.00×",
            "3 Mar 2026|–|0|0|0.00|–|–|–",
        ]
        .map(str::to_owned)
    );
    // And as columns: spend and the value it bought, on one scale (the tallest, 1 March's
    // value, is 1,250.00), a column a day with any.
    page.assert_shows(
        StatusCode::OK,
        &[
            "aria-label=\"Spend per day, 450.00 in all, on one scale with the other (the tallest column is 1,250.00).",
            "aria-label=\"Rated value per day, 1,250.00 in all, on one scale with the other",
            "<title>2026-03-02: 250.00</title>",
            "<title>2026-03-01: 1,250.00</title>",
        ],
    );
    // One row's trend, from its link: Google's spring campaign, day by day.
    let spring = app
        .get(&format!("{path}&spend_trend=google%2Fspring"), &member)
        .await;
    spring.assert_shows(
        StatusCode::OK,
        &[
            "id=\"spend-trend\">Spend and rated value per day: spring</h3>",
            "aria-current=\"true\">spring</a>",
            "aria-label=\"Spend of spring per day, 300.00 in all,",
        ],
    );
    let days = table_rows(&spring.text, "report stack spend periods");
    assert_eq!(
        days[1..],
        [
            "1 Mar 2026|200.00|2|2|1,250.00|100.00|100.00|6.25×",
            "2 Mar 2026|100.00|0|0|0.00|–|–|0.00×",
            "3 Mar 2026|–|0|0|0.00|–|–|–",
        ]
        .map(str::to_owned)
    );
    // A row the range does not have: every row's trend, and the page says why.
    let gone = app
        .get(&format!("{path}&spend_trend=google%2Fautumn"), &member)
        .await;
    gone.assert_shows(
        StatusCode::OK,
        &[
            "the row asked for has no spend or leads in this range",
            "id=\"spend-trend\">Spend and rated value per day</h3>",
        ],
    );
    let by_label = app.get(&format!("{path}&spend_by=label"), &member).await;
    let rows = table_rows(&by_label.text, "report stack spend");
    assert!(rows[0].starts_with("Label|Spend|"), "{}", rows[0]);
    assert!(
        !by_label.text.contains("spend_trend="),
        "labels have no spend of their own"
    );
    assert_eq!(
        rows.last().unwrap(),
        "Total|450.00|75|4|2|2|1,250.00|112.50|225.00|225.00|2.78×"
    );
}

#[tokio::test]
async fn bad_report_parameters_are_said_and_the_defaults_shown() {
    let app = app().await;
    let member = exporter(&app).await;
    let page = app
        .get(
            "/projects/alpha/reports?from=yesterday&to=2026-02-30&touch=middle&by=colour",
            &member,
        )
        .await;
    page.assert_shows(
        StatusCode::OK,
        &[
            "The start date “yesterday” is not a date like 2026-03-15",
            "The end date “2026-02-30” is not a date like 2026-03-15",
            "“middle” is not a touch (first or last)",
            "“colour” is not a grouping",
        ],
    );
    let today = Utc::now().date_naive();
    let from = today - chrono::Days::new(29);
    assert!(
        page.text
            .contains(&format!("name=\"from\" type=\"date\" value=\"{from}\""))
    );
    assert!(
        page.text
            .contains(&format!("name=\"to\" type=\"date\" value=\"{today}\""))
    );
    assert!(page.text.contains("<option value=\"first\" selected>"));
    assert!(
        page.text
            .contains("<option value=\"source_medium\" selected>")
    );
    let reversed = app
        .get(
            "/projects/alpha/reports?from=2026-03-10&to=2026-03-01",
            &member,
        )
        .await;
    assert!(
        reversed
            .text
            .contains("The start date is after the end date")
    );
}

/// The exported rows: the header, then one line per lead (a quoted cell may hold a line
/// break, so lines are split on CRLF, the record terminator).
fn records(text: &str) -> Vec<&str> {
    text.strip_suffix("\r\n")
        .unwrap_or(text)
        .split("\r\n")
        .collect()
}

const HEADER: &str = "\u{feff}id,created,status,form_name,first_name,last_name,email,phone,company,price,currency,note,conversion_id,label,rated_at,rated_by,assignee,unique_identifier,first_touch,first_campaign,last_touch,last_campaign,gclid,gbraid,wbraid,cid,fbp,fbc,fbclid,msclkid,li_fat_id,ttclid,_ttp,rdt_cid,_rdt_uuid,ScCid,_scid,epik,_epik,twclid,utm_source,utm_medium,utm_campaign,form_fields";

#[tokio::test]
async fn the_export_is_the_inbox_view_as_csv_with_formulas_neutralised() {
    let app = app().await;
    let scarlett = app
        .lead_at(
            &app.alpha,
            json!({
                "userData": {
                    "firstName": "=HYPERLINK(\"http://evil.example\")",
                    "lastName": "O'Hara, \"Scarlett\"",
                    "email": "s@x.io",
                    "phone": "+1 555 0100",
                    "companyName": "@corp"
                },
                "attributionData": {"gclid": "G1", "utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring"},
                "formData": {"formName": "Contact", "message": "line1\nline2"},
                "uniqueIdentifier": "crm-1"
            }),
            march(1, 10),
        )
        .await;
    let flow = r#"[{"ch":{"s":"facebook","m":"paid_social"}},{"ch":{"s":"google","m":"cpc","cm":"retarget"}}]"#;
    app.lead_at(
        &app.alpha,
        json!({"userData": {"firstName": "Bo", "email": "bo@x.io"}, "attributionData": {"fbp": "fb.1.1", "fbclid": "IwAR-bo", "msclkid": "ms-bo", "li_fat_id": "li-bo", "ttclid": "tt-bo", "_ttp": "ttp-bo", "rdt_cid": "rdt-bo", "_rdt_uuid": "rdtu-bo", "ScCid": "sc-bo", "_scid": "scid-bo", "epik": "ep-bo", "_epik": "epk-bo", "twclid": "tw-bo"}, "channelFlow": flow}),
        march(2, 9),
    )
    .await;
    let rated = app
        .lead_at(
            &app.alpha,
            json!({"userData": {"email": "won@x.io"}}),
            march(3, 9),
        )
        .await;
    app.lead_at(
        &app.beta,
        json!({"userData": {"email": "beta@x.io"}}),
        march(1, 9),
    )
    .await;
    let priced = StatusUpdate {
        identifier: LeadIdentifier::LeadId(scarlett),
        conversion_id: ConversionId::Open,
        price: Some(150_050),
        note: Some(Some("-2+3\tsum\r\nsecond line".into())),
    };
    app.store
        .update_status(
            app.alpha.id,
            &priced,
            &Actor::api_key("lt_test0000"),
            Utc::now(),
        )
        .await
        .unwrap();
    let customer = app.label(&app.alpha, "Customer").await.id;
    let won = StatusUpdate {
        identifier: LeadIdentifier::LeadId(rated),
        conversion_id: ConversionId::Label(customer),
        price: Some(99),
        note: None,
    };
    let by = Actor::api_key("lt_test0000");
    app.store
        .update_status(app.alpha.id, &won, &by, march(3, 12))
        .await
        .unwrap();

    let member = exporter(&app).await;
    let open = app.get("/projects/alpha/leads.csv", &member).await;
    assert_eq!(open.status, StatusCode::OK);
    assert_eq!(open.header("content-type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        open.header("content-disposition").unwrap(),
        format!(
            "attachment; filename=\"leads-alpha-{}.csv\"",
            Utc::now().format("%Y-%m-%d")
        )
    );
    assert_eq!(open.header("cache-control"), Some("no-store"));
    assert!(
        open.text
            .as_bytes()
            .starts_with(&[0xEF, 0xBB, 0xBF, b'i', b'd']),
        "UTF-8's byte-order mark, then the header"
    );
    assert_eq!(
        open.text,
        [
            HEADER,
            &format!("2,2026-03-02T09:00:00.000Z,open,,Bo,,bo@x.io,,,,USD,,,,,,,,facebook / paid_social,,google / cpc,retarget,,,,,fb.1.1,fb.1.{}.IwAR-bo,IwAR-bo,ms-bo,li-bo,tt-bo,ttp-bo,rdt-bo,rdtu-bo,sc-bo,scid-bo,ep-bo,epk-bo,tw-bo,,,,", march(2, 9).timestamp_millis()),
            "1,2026-03-01T10:00:00.000Z,open,Contact,\"'=HYPERLINK(\"\"http://evil.example\"\")\",\"O'Hara, \"\"Scarlett\"\"\",s@x.io,'+1 555 0100,'@corp,1500.50,USD,\"'-2+3\tsum\r\nsecond line\",,,,,,crm-1,google / cpc,spring,google / cpc,spring,G1,,,,,,,,,,,,,,,,,,google,cpc,spring,\"{\"\"formName\"\":\"\"Contact\"\",\"\"message\"\":\"\"line1\\nline2\"\"}\"",
            "",
        ]
        .join("\r\n")
    );
    let pending = app
        .get("/projects/alpha/leads.csv?tab=pending", &member)
        .await;
    assert_eq!(
        records(&pending.text),
        [
            HEADER.to_owned(),
            format!(
                "3,2026-03-03T09:00:00.000Z,pending,,,,won@x.io,,,0.99,USD,,{customer},Customer,2026-03-03T12:00:00.000Z,API key lt_test0000,,,,,,,,,,,,,,,,,,,,,,,,,,,,"
            )
        ]
    );
}

#[tokio::test]
async fn the_export_applies_the_views_filters_and_access_rules() {
    let app = app().await;
    for (n, (form, gclid)) in [
        ("Contact", true),
        ("Contact", false),
        ("Quote", true),
        ("Contact", true),
    ]
    .into_iter()
    .enumerate()
    {
        let mut attribution = json!({"utm_source": "x"});
        if gclid {
            attribution["gclid"] = json!(format!("G{n}"));
        }
        app.lead_at(
            &app.alpha,
            json!({"userData": {"firstName": format!("Lead{n}")}, "formData": {"formName": form}, "attributionData": attribution}),
            march(n as u32 + 1, 9),
        )
        .await;
    }
    app.rate(&app.alpha, LeadId(4), ConversionId::Lost, None)
        .await;
    let member = exporter(&app).await;
    let views = [
        (
            "",
            LeadQuery {
                status: Some(vec![LeadStatus::Open]),
                ..LeadQuery::default()
            },
        ),
        (
            "tab=open&formName=Contact&gclid=yes",
            LeadQuery {
                status: Some(vec![LeadStatus::Open]),
                form_name: Some("Contact".into()),
                gclid_exists: Some(true),
                ..LeadQuery::default()
            },
        ),
        (
            "tab=open&from=2026-03-02&to=2026-03-03&sort=firstName:asc",
            LeadQuery {
                status: Some(vec![LeadStatus::Open]),
                created_from: Some(march(2, 0)),
                created_to: Some(march(3, 23) + chrono::Duration::milliseconds(3_599_999)),
                sort: Sort {
                    field: SortField::FirstName,
                    direction: SortDirection::Asc,
                },
                ..LeadQuery::default()
            },
        ),
        (
            "tab=pending&search=lead",
            LeadQuery {
                status: Some(vec![LeadStatus::Pending]),
                search: Some("lead".into()),
                ..LeadQuery::default()
            },
        ),
    ];
    for (view, query) in views {
        let listed = app.store.list_leads(app.alpha.id, &query).await.unwrap();
        let csv = app
            .get(&format!("/projects/alpha/leads.csv?{view}"), &member)
            .await;
        assert_eq!(csv.status, StatusCode::OK, "{view}");
        let ids: Vec<String> = records(&csv.text)[1..]
            .iter()
            .map(|row| row.split(',').next().unwrap().to_owned())
            .collect();
        let expected: Vec<String> = listed
            .leads
            .iter()
            .map(|lead| lead.id.to_string())
            .collect();
        assert_eq!(ids, expected, "{view}");
        assert_eq!(ids.len() as u64, listed.total, "{view}");
        assert!(!ids.is_empty(), "{view} exports something");
    }

    let bad = app
        .get("/projects/alpha/leads.csv?tab=done&sort=nope", &member)
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.text.contains("This export&#39;s link is not right")
            || bad.text.contains("This export's link is not right")
    );
    assert_eq!(
        app.get("/projects/beta/leads.csv", &member).await.status,
        StatusCode::NOT_FOUND
    );
    let visitor = app.send(browser("GET", "/projects/alpha/leads.csv")).await;
    assert_eq!(visitor.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn an_export_longer_than_a_batch_has_every_lead_once_in_order() {
    let app = app().await;
    let count = 2_345_usize;
    for chunk in (0..count).collect::<Vec<_>>().chunks(500) {
        join_all(chunk.iter().map(|&n| {
            // Every third lead has no first name, so name order crosses into the leads
            // without one; creation times repeat, so ties are broken on the id.
            let user = if n % 3 == 0 {
                json!({"email": format!("n{n}@x.io")})
            } else {
                json!({"firstName": format!("{}{n:04}", if n % 2 == 0 { "a" } else { "B" })})
            };
            app.lead_at(
                &app.alpha,
                json!({"userData": user}),
                march(1, 0) + chrono::Duration::minutes((n / 7) as i64),
            )
        }))
        .await;
    }
    let member = exporter(&app).await;
    for sort in ["", "&sort=firstName:asc", "&sort=createdAt:asc"] {
        let csv = app
            .get(
                &format!("/projects/alpha/leads.csv?tab=open{sort}"),
                &member,
            )
            .await;
        let ids: Vec<i64> = records(&csv.text)[1..]
            .iter()
            .map(|row| row.split(',').next().unwrap().parse().unwrap())
            .collect();
        // The listing's own pages, read by offset, are the order to match.
        let (_, field_direction) = sort.split_once('=').unwrap_or(("", "createdAt:desc"));
        let mut expected = Vec::new();
        for page in 1.. {
            let query = LeadQuery::from_pairs([
                ("status", "open"),
                ("limit", "100"),
                ("page", &page.to_string()),
                ("sort", field_direction),
            ])
            .unwrap();
            let leads = app
                .store
                .list_leads(app.alpha.id, &query)
                .await
                .unwrap()
                .leads;
            if leads.is_empty() {
                break;
            }
            expected.extend(leads.iter().map(|lead| lead.id.0));
        }
        assert_eq!(expected.len(), count);
        assert_eq!(ids, expected, "{sort}");
    }
}
