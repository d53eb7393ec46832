//! Stand-ins for the reporting APIs spend is read from, checking their documented request
//! shapes:
//! - Microsoft Advertising's Reporting API, served by the sign-in mock (`MockSignIn`) as
//!   Microsoft's: `GenerateReport/Submit` of a daily `CampaignPerformanceReportRequest`
//!   (<https://learn.microsoft.com/en-us/advertising/reporting-service/submitgeneratereport?view=bingads-13>),
//!   `GenerateReport/Poll`, pending once, then the address of a zipped CSV
//!   (<https://learn.microsoft.com/en-us/advertising/reporting-service/pollgeneratereport?view=bingads-13>);
//! - LinkedIn's `adAnalytics` Analytics finder by campaign and day, the ad account and its
//!   campaigns (two pages), served by the mock as LinkedIn's
//!   (<https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/ads-reporting>);
//! - TikTok's integrated report and advertiser info ([`MockTiktokReports`]), which want the
//!   `Access-Token` header, refuse a range of more than 30 days by day, and page by 1,000
//!   (<https://business-api.tiktok.com/portal/docs?id=1740302848100353>).

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::sync::{Arc, Mutex};

use chrono::{Datelike, NaiveDate};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use warp::Filter;
use warp::http::StatusCode;
use warp::reply::{Reply, Response};

/// What Microsoft Advertising's campaigns of the sign-in mock's account cost each day, in
/// dollars: (campaign id, name, spend, clicks); the last spent nothing.
pub const MICROSOFT_SPEND: [(&str, &str, &str, u64); 3] = [
    ("9001", "Bing brand", "12.50", 40),
    ("9002", "Bing generic", "7.25", 11),
    ("9003", "Bing paused", "0.00", 0),
];
/// What LinkedIn's campaigns of the sign-in mock's ad account cost each day, in euros:
/// (campaign id, name, cost, clicks).
pub const LINKEDIN_SPEND: [(i64, &str, &str, u64); 2] = [
    (6101, "Decision makers", "80.25", 19),
    (6102, "Webinar", "15", 4),
];
/// TikTok's advertiser, its currency, and what its campaigns cost each day: (campaign id,
/// name, spend, clicks).
pub const TIKTOK_ADVERTISER: (&str, &str) = ("7000001", "GBP");
/// See [`TIKTOK_ADVERTISER`].
pub const TIKTOK_SPEND: [(&str, &str, &str, u64); 2] = [
    ("1801", "Spark ads", "45.10", 310),
    ("1802", "Lookalikes", "3.90", 12),
];
/// The access token [`MockTiktokReports`] takes.
pub const TIKTOK_TOKEN: &str = "tiktok-reporting-token";

/// The days from `from` to `to`, first to last.
fn days(from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    from.iter_days().take_while(|day| *day <= to).collect()
}

fn error(status: StatusCode, reason: &str) -> Response {
    warp::reply::with_status(warp::reply::json(&json!({"error": reason})), status).into_response()
}

/// The `CustomerId` and `CustomerAccountId` headers of a Microsoft call.
type Headers<'a> = (Option<&'a str>, Option<&'a str>);

/// Microsoft's `Reporting/v13/GenerateReport/...` calls, for the known account
/// `(customer id, account id)` by the `CustomerId` and `CustomerAccountId` headers;
/// `polled` holds the report ids polled once already, `host` the mock's address. `None`
/// for another path.
pub(super) fn microsoft(
    path: &str,
    ((customer_id, account_id), (customer, account)): ((i64, i64), Headers<'_>),
    body: &Value,
    (polled, host): (&mut HashSet<String>, &str),
) -> Option<Response> {
    let known = customer == Some(&customer_id.to_string()[..])
        && account == Some(&account_id.to_string()[..]);
    let answer = match path {
        "Reporting/v13/GenerateReport/Submit" => {
            let request = &body["ReportRequest"];
            let date = |end: &str| {
                let at = &request["Time"][end];
                let part = |name: &str| at[name].as_u64().and_then(|n| u32::try_from(n).ok());
                NaiveDate::from_ymd_opt(part("Year")? as i32, part("Month")?, part("Day")?)
            };
            let columns: Vec<&str> = request["Columns"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let asked = request["Type"] == "CampaignPerformanceReportRequest"
                && request["Aggregation"] == "Daily"
                && request["Format"] == "Csv"
                && request["Scope"]["AccountIds"] == json!([account_id.to_string()])
                && [
                    "TimePeriod",
                    "CampaignId",
                    "CampaignName",
                    "CurrencyCode",
                    "Spend",
                ]
                .iter()
                .all(|c| columns.contains(c));
            let (Some(from), Some(to)) = (date("CustomDateRangeStart"), date("CustomDateRangeEnd"))
            else {
                return Some(error(StatusCode::BAD_REQUEST, "InvalidCustomDateRange"));
            };
            if !asked || !known {
                return Some(error(StatusCode::BAD_REQUEST, "InvalidReportRequest"));
            }
            json!({"ReportRequestId": format!("{from}_{to}")})
        }
        "Reporting/v13/GenerateReport/Poll" => {
            let id = body["ReportRequestId"].as_str().unwrap_or_default();
            if !known || !id.contains('_') {
                return Some(error(StatusCode::BAD_REQUEST, "InvalidReportRequestId"));
            }
            match polled.insert(id.to_owned()) {
                true => {
                    json!({"ReportRequestStatus": {"Status": "Pending", "ReportDownloadUrl": null}})
                }
                false => json!({"ReportRequestStatus": {"Status": "Success",
                    "ReportDownloadUrl": format!("http://{host}/reports/{id}.zip")}}),
            }
        }
        _ => return None,
    };
    Some(warp::reply::json(&answer).into_response())
}

/// The report named `file` (`FROM_TO.zip`): a zip archive of one CSV file with
/// [`MICROSOFT_SPEND`]'s campaigns each day, its columns as asked, and a copyright
/// footer as Microsoft writes one unless told not to.
pub(super) fn microsoft_report(file: &str) -> Response {
    let range = file.strip_suffix(".zip").and_then(|id| id.split_once('_'));
    let parse = |day: &str| NaiveDate::parse_from_str(day, "%Y-%m-%d").ok();
    let Some((Some(from), Some(to))) = range.map(|(from, to)| (parse(from), parse(to))) else {
        return error(StatusCode::NOT_FOUND, "BlobNotFound");
    };
    let mut csv = String::from(
        "\u{feff}\"TimePeriod\",\"CampaignId\",\"CampaignName\",\"CurrencyCode\",\"Spend\",\"Clicks\",\"Impressions\"\r\n",
    );
    for day in days(from, to) {
        for (id, name, spend, clicks) in MICROSOFT_SPEND {
            csv.push_str(&format!(
                "\"{day}\",\"{id}\",\"{name}\",\"USD\",\"{spend}\",\"{clicks}\",\"500\"\r\n"
            ));
        }
    }
    csv.push_str("\r\n\"©2026 Microsoft Corporation. All rights reserved. \"\r\n");
    let mut zipped = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zipped
        .start_file("leadtrack spend.csv", options)
        .and_then(|()| Ok(zipped.write_all(csv.as_bytes())?))
        .expect("the mock's report zips");
    let bytes = zipped
        .finish()
        .expect("the mock's report zips")
        .into_inner();
    warp::reply::with_header(bytes, "content-type", "application/octet-stream").into_response()
}

/// LinkedIn's reporting answers for the known ad `account`: `adAnalytics` by campaign and
/// day (each day of the `dateRange`, [`LINKEDIN_SPEND`]'s campaigns), the account, and its
/// campaigns one a page. `None` for another path.
pub(super) fn linkedin(
    account: i64,
    path: &str,
    query: &HashMap<String, String>,
) -> Option<Response> {
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let body = if path == "adAnalytics" {
        let fields = get("fields");
        let asked = get("q") == "analytics"
            && get("pivot") == "CAMPAIGN"
            && get("timeGranularity") == "DAILY"
            && get("accounts") == format!("List(urn:li:sponsoredAccount:{account})")
            && ["dateRange", "pivotValues", "costInLocalCurrency"]
                .iter()
                .all(|f| fields.split(',').any(|asked| asked == *f));
        let Some((from, to)) = linkedin_range(get("dateRange")).filter(|_| asked) else {
            return Some(error(StatusCode::BAD_REQUEST, "ILLEGAL_ARGUMENT"));
        };
        let elements: Vec<Value> = days(from, to)
            .into_iter()
            .flat_map(|day| {
                let date = json!({"year": day.year(), "month": day.month(), "day": day.day()});
                LINKEDIN_SPEND.iter().map(move |(id, _, cost, clicks)| {
                    json!({"dateRange": {"start": date, "end": date},
                           "pivotValues": [format!("urn:li:sponsoredCampaign:{id}")],
                           "costInLocalCurrency": cost, "clicks": clicks, "impressions": 900})
                })
            })
            .collect();
        json!({"elements": elements, "paging": {"start": 0, "count": 10, "links": []}})
    } else if path == format!("adAccounts/{account}") {
        json!({"id": account, "name": "Acme Sponsored", "currency": "EUR"})
    } else if path == format!("adAccounts/{account}/adCampaigns") && get("q") == "search" {
        // One campaign a page, the next page's token in the metadata.
        let at: usize = get("pageToken").parse().unwrap_or(0);
        let Some((id, name, ..)) = LINKEDIN_SPEND.get(at) else {
            return Some(error(StatusCode::BAD_REQUEST, "INVALID_PAGE_TOKEN"));
        };
        let mut body = json!({"elements": [{"id": id, "name": name}], "metadata": {}});
        if at + 1 < LINKEDIN_SPEND.len() {
            body["metadata"]["nextPageToken"] = json!((at + 1).to_string());
        }
        body
    } else {
        return None;
    };
    Some(warp::reply::json(&body).into_response())
}

/// The first and last day of a Rest.li `dateRange`,
/// `(start:(year:2026,month:3,day:1),end:(year:2026,month:3,day:4))`.
fn linkedin_range(text: &str) -> Option<(NaiveDate, NaiveDate)> {
    let date = |part: &str| {
        let number = |name: &str| {
            let rest = part.split_once(&format!("{name}:"))?.1;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        };
        NaiveDate::from_ymd_opt(number("year")? as i32, number("month")?, number("day")?)
    };
    let (start, end) = text.split_once(",end:")?;
    Some((date(start.strip_prefix("(start:")?)?, date(end)?))
}

/// TikTok's Business API reports, for [`TIKTOK_ADVERTISER`] with [`TIKTOK_TOKEN`]; it
/// stops when dropped.
pub struct MockTiktokReports {
    url: String,
    requests: Arc<Mutex<Vec<HashMap<String, String>>>>,
    _stop: oneshot::Sender<()>,
}

impl MockTiktokReports {
    /// Starts the mock on a free loopback port.
    pub async fn start() -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        let routes = warp::get()
            .and(warp::path("open_api"))
            .and(warp::path("v1.3"))
            .and(warp::path::tail())
            .and(warp::query::<HashMap<String, String>>())
            .and(warp::header::optional::<String>("access-token"))
            .map(
                move |call: warp::path::Tail,
                      query: HashMap<String, String>,
                      token: Option<String>| {
                    kept.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(query.clone());
                    if token.as_deref() != Some(TIKTOK_TOKEN) {
                        let revoked = "Access token is incorrect or has been revoked.";
                        return tiktok_answer(40105, revoked, Value::Null);
                    }
                    match call.as_str().trim_end_matches('/') {
                        "advertiser/info" => tiktok_info(&query),
                        "report/integrated/get" => tiktok_report(&query),
                        _ => error(StatusCode::NOT_FOUND, "NOT_FOUND"),
                    }
                },
            );
        let (url, stop) = super::serve(routes).await;
        Self {
            url,
            requests,
            _stop: stop,
        }
    }

    /// The mock's address, as a source's `base_url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The query of every request, in order.
    pub fn requests(&self) -> Vec<HashMap<String, String>> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// TikTok's envelope: HTTP 200 with the call's `code`, `message` and `data`.
fn tiktok_answer(code: i64, message: &str, data: Value) -> Response {
    warp::reply::json(
        &json!({"code": code, "message": message, "data": data, "request_id": "mock"}),
    )
    .into_response()
}

/// `advertiser/info/`: the advertiser's currency, when asked for it.
fn tiktok_info(query: &HashMap<String, String>) -> Response {
    let (advertiser, currency) = TIKTOK_ADVERTISER;
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let ids: Value = serde_json::from_str(get("advertiser_ids")).unwrap_or(Value::Null);
    let fields: Value = serde_json::from_str(get("fields")).unwrap_or(Value::Null);
    if ids != json!([advertiser])
        || !fields
            .as_array()
            .is_some_and(|f| f.contains(&json!("currency")))
    {
        return tiktok_answer(40002, "advertiser_ids: invalid", Value::Null);
    }
    tiktok_answer(
        0,
        "OK",
        json!({"list": [{"advertiser_id": advertiser, "currency": currency}]}),
    )
}

/// `report/integrated/get/`: [`TIKTOK_SPEND`]'s campaigns each day of at most 30, five
/// days a page.
fn tiktok_report(query: &HashMap<String, String>) -> Response {
    let (advertiser, _) = TIKTOK_ADVERTISER;
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let list = |name: &str| -> Vec<String> { serde_json::from_str(get(name)).unwrap_or_default() };
    let asked = get("advertiser_id") == advertiser
        && get("report_type") == "BASIC"
        && get("data_level") == "AUCTION_CAMPAIGN"
        && list("dimensions") == ["campaign_id", "stat_time_day"]
        && ["spend", "campaign_name"]
            .iter()
            .all(|m| list("metrics").iter().any(|a| a == m));
    let parse = |name: &str| NaiveDate::parse_from_str(get(name), "%Y-%m-%d").ok();
    let (Some(from), Some(to)) = (parse("start_date"), parse("end_date")) else {
        return tiktok_answer(40002, "start_date: invalid", Value::Null);
    };
    if !asked {
        return tiktok_answer(40002, "Invalid parameters", Value::Null);
    }
    if (to - from).num_days() >= 30 {
        return tiktok_answer(40002, "The time span cannot exceed 30 days", Value::Null);
    }
    // Two rows a day; a page is at most `page_size` rows, and at most 10 here: a page
    // shorter than asked is still a page, and a read must follow `total_page`.
    let size: usize = get("page_size").parse().unwrap_or(10).clamp(1, 10);
    let per_page = (size / TIKTOK_SPEND.len()).max(1);
    let all = days(from, to);
    let pages: Vec<&[NaiveDate]> = all.chunks(per_page).collect();
    let page: usize = get("page").parse().unwrap_or(1);
    let rows: Vec<Value> = pages
        .get(page.saturating_sub(1))
        .into_iter()
        .flat_map(|days| days.iter())
        .flat_map(|day| {
            TIKTOK_SPEND.iter().map(move |(id, name, spend, clicks)| {
                json!({"dimensions": {"campaign_id": id, "stat_time_day": format!("{day} 00:00:00")},
                       "metrics": {"spend": spend, "clicks": clicks.to_string(), "impressions": "2000", "campaign_name": name}})
            })
        })
        .collect();
    tiktok_answer(
        0,
        "OK",
        json!({"list": rows, "page_info": {"page": page, "page_size": size, "total_number": all.len() * TIKTOK_SPEND.len(), "total_page": pages.len()}}),
    )
}
