//! Microsoft Advertising, through the Campaign Management API's offline conversions.
//!
//! `POST {base}/CampaignManagement/v13/OfflineConversions/Apply` with an OAuth access token
//! (`Authorization: Bearer`) and the `DeveloperToken`, `CustomerId` and `CustomerAccountId`
//! headers, up to 1,000 `OfflineConversion`s per request, each with the Microsoft click id,
//! the conversion goal's name, the time, value and currency, and the hashed email and phone
//! (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions>,
//! <https://learn.microsoft.com/en-us/advertising/campaign-management-service/offlineconversion>).
//! A conversion with the same click id, name and time is applied once, so a resent
//! delivery (the time is the conversion's first rating) is not counted twice. A new price
//! for it is a `Restate` adjustment, `POST {base}/CampaignManagement/v13/
//! OfflineConversionAdjustments/Apply`, naming the same click id, name and time
//! (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversionadjustments?view=bingads-13>).
//!
//! Errors come as `PartialErrors` of a 200 answer, or as the fault body of a 4xx or 5xx
//! (`OperationErrors` or `Errors`); each has a numeric `Code`. Internal errors (0) and the
//! call rate limit (117) are retried, as is any 429 or 5xx; other codes fail the delivery.
//!
//! This module holds the requests and how their answers read; a job's delivery is
//! `leadtrack-forward`'s. Here too: the account and offline conversion goal pickers
//! ([`accounts`], [`offline_goals`]), and the spend report's reader ([`spend`]).

use chrono::{Datelike, NaiveDate};
use leadtrack_core::integration::MicrosoftAdsSettings;
use leadtrack_core::oauth::ClientAuth;
use leadtrack_core::oauth::{OAuthApp, OAuthGrant};
use leadtrack_core::spend::{SpendPlatform, SpendRow};
use leadtrack_outbound::Outbound;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::with_grant;
use crate::oauth::{self, RefreshGrant, TokenCache};
use crate::outcome::{self, Answer, Outcome};

/// Where conversions go unless the settings say otherwise.
pub const DEFAULT_BASE_URL: &str = "https://campaign.api.bingads.microsoft.com";
/// The most offline conversions one `ApplyOfflineConversions` request carries: "You can
/// apply up to 1,000 offline conversions per call"
/// (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions>).
pub const BATCH_SIZE: usize = 1_000;
/// The Microsoft identity platform's token endpoint.
pub const DEFAULT_TOKEN_URL: &str = "https://login.microsoftonline.com/common/oauth2/v2.0/token";
/// The scope of the Advertising API, with `offline_access` for refresh tokens.
const SCOPE: &str = "https://ads.microsoft.com/msads.manage offline_access";
/// Error codes worth a retry: an internal error, the call rate exceeded.
const TRANSIENT_CODES: [i64; 2] = [0, 117];

/// One error of an answer.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ApiError {
    #[serde(default)]
    code: Option<i64>,
    /// Which conversion of the request it is about, for a partial or batch error.
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    error_code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// The errors an answer carries: `PartialErrors` of a success, `OperationErrors`,
/// `BatchErrors` or `Errors` of a fault.
#[derive(Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct Errors {
    partial_errors: Option<Vec<ApiError>>,
    operation_errors: Option<Vec<ApiError>>,
    batch_errors: Option<Vec<ApiError>>,
    errors: Option<Vec<ApiError>>,
}

impl Errors {
    fn all(self) -> Vec<ApiError> {
        [
            self.partial_errors,
            self.operation_errors,
            self.batch_errors,
            self.errors,
        ]
        .into_iter()
        .flatten()
        .flatten()
        .collect()
    }
}

/// Reads Microsoft's answer: applied, or errors whose codes say whether a retry can help.
pub fn classify(answer: &Answer, secrets: &[&str]) -> Outcome {
    let errors = read_errors(answer);
    judge(answer, &errors.iter().collect::<Vec<_>>(), secrets)
}

/// Reads Microsoft's answer to `count` offline conversions: each has the errors that name
/// its `Index`, with those of the whole request; none on a success means it was applied
/// (<https://learn.microsoft.com/en-us/advertising/campaign-management-service/applyofflineconversions>:
/// "the list of errors that correspond to any offline conversions that could not be
/// applied", by index).
pub fn classify_each(answer: &Answer, secrets: &[&str], count: usize) -> Vec<Outcome> {
    let errors = read_errors(answer);
    (0..count)
        .map(|index| {
            let own: Vec<&ApiError> = errors
                .iter()
                .filter(|error| error.index.is_none_or(|at| at == index))
                .collect();
            judge(answer, &own, secrets)
        })
        .collect()
}

fn read_errors(answer: &Answer) -> Vec<ApiError> {
    serde_json::from_slice::<Errors>(&answer.body)
        .map(Errors::all)
        .unwrap_or_default()
}

/// The outcome of an answer with `errors`: applied when it succeeded without any.
fn judge(answer: &Answer, errors: &[&ApiError], secrets: &[&str]) -> Outcome {
    if answer.is_success() && errors.is_empty() {
        return Outcome::Delivered {
            status: answer.status,
        };
    }
    if errors.is_empty() {
        return answer.by_status(|| {
            outcome::scrub(
                format!("HTTP {}: {}", answer.status, answer.snippet()),
                secrets,
            )
        });
    }
    let described: Vec<String> = errors
        .iter()
        .map(|error| {
            format!(
                "{} {}: {}",
                error.code.map_or_else(|| "?".to_owned(), |c| c.to_string()),
                error.error_code.as_deref().unwrap_or(""),
                error.message.as_deref().unwrap_or("")
            )
        })
        .collect();
    let error = outcome::scrub(
        outcome::short(&format!("HTTP {}: {}", answer.status, described.join("; "))),
        secrets,
    );
    let transient = outcome::is_retryable_status(answer.status)
        || errors
            .iter()
            .all(|e| e.code.is_some_and(|code| TRANSIENT_CODES.contains(&code)));
    if transient {
        Outcome::Retry {
            status: Some(answer.status),
            error,
            retry_after: answer.retry_after,
        }
    } else {
        Outcome::Failed {
            status: Some(answer.status),
            error,
        }
    }
}

/// The settings' refresh-token grant at the Microsoft identity platform.
pub fn grant(settings: &MicrosoftAdsSettings) -> RefreshGrant<'_> {
    RefreshGrant {
        token_url: settings.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL),
        client_id: &settings.client_id,
        client_secret: settings.client_secret.as_ref().map(|s| s.expose()),
        refresh_token: settings.refresh_token.expose(),
        scope: Some(SCOPE),
        auth: ClientAuth::Form,
    }
}

/// Where offline conversions are applied.
pub const APPLY_PATH: &str = "/CampaignManagement/v13/OfflineConversions/Apply";
/// Where adjustments to applied offline conversions go.
pub const ADJUST_PATH: &str = "/CampaignManagement/v13/OfflineConversionAdjustments/Apply";

/// Posts `body` to `path` (offline conversions or their adjustments), with a token and the
/// account headers.
pub async fn apply(
    http: &Outbound,
    tokens: &TokenCache,
    settings: &MicrosoftAdsSettings,
    path: &str,
    body: &Value,
) -> Result<Answer, Outcome> {
    let url = outcome::endpoint(settings.base_url.as_deref(), DEFAULT_BASE_URL, path);
    oauth::send_authorized(http, tokens, &grant(settings), |token| {
        Ok(http
            .post(&url)?
            .bearer_auth(token)
            .header("DeveloperToken", settings.developer_token.expose())
            .header("CustomerId", &settings.customer_id)
            .header("CustomerAccountId", &settings.account_id)
            .json(body))
    })
    .await
}

/// The credentials of the settings, for scrubbing.
pub fn secrets(settings: &MicrosoftAdsSettings) -> Vec<&str> {
    let mut secrets = vec![
        settings.developer_token.expose(),
        settings.refresh_token.expose(),
    ];
    secrets.extend(settings.client_secret.as_ref().map(|s| s.expose()));
    secrets
}

/// A Microsoft Advertising account the signed-in user reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MicrosoftAccount {
    /// The customer it belongs to (the `CustomerId` of its calls).
    pub customer_id: String,
    /// Its id (the `CustomerAccountId`), not its number.
    pub account_id: String,
    /// Its name.
    pub name: String,
    /// Its number, as Microsoft Advertising shows it (e.g. `F12345AB`).
    pub number: String,
}

/// Calls the Microsoft Advertising REST API at `url` with `body`, the grant's access token,
/// the operator's developer token and, for an account's calls, its customer and account.
async fn call(
    http: &Outbound,
    (app, grant): (&OAuthApp, &OAuthGrant),
    url: &str,
    body: serde_json::Value,
    account: Option<(&str, &str)>,
) -> Result<serde_json::Value, String> {
    let developer_token = app.developer_token.as_ref().ok_or(
        "the server has no Microsoft Advertising developer token (--microsoft-ads-developer-token)",
    )?;
    let request = |token: &str| {
        let request = http
            .post(url)?
            .bearer_auth(token)
            .header("DeveloperToken", developer_token.expose())
            .json(&body);
        Ok(match account {
            Some((customer, account)) => request
                .header("CustomerId", customer)
                .header("CustomerAccountId", account),
            None => request,
        })
    };
    let secrets = [developer_token.expose()];
    with_grant(
        http,
        (app, grant),
        "Microsoft Advertising",
        request,
        &secrets,
    )
    .await
}

/// The accounts the signed-in user reaches: who they are (`GetUser` with no id,
/// <https://learn.microsoft.com/en-us/advertising/customer-management-service/getuser?view=bingads-13>),
/// then the accounts that user can access (`SearchAccounts` by `UserId`,
/// <https://learn.microsoft.com/en-us/advertising/customer-management-service/searchaccounts?view=bingads-13>),
/// from the Customer Management REST API.
pub async fn accounts(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
) -> Result<Vec<MicrosoftAccount>, String> {
    let base = format!("{}/CustomerManagement/v13", app.endpoints.api);
    let with = (app, grant);
    let user = call(
        http,
        with,
        &format!("{base}/User/Query"),
        json!({"UserId": null}),
        None,
    )
    .await?;
    let user_id = match &user["User"]["Id"] {
        serde_json::Value::Number(id) => id.to_string(),
        _ => return Err("Microsoft Advertising named no user".to_owned()),
    };
    let search = json!({
        "Predicates": [{"Field": "UserId", "Operator": "Equals", "Value": user_id}],
        "Ordering": [{"Field": "Name", "Order": "Ascending"}],
        "PageInfo": {"Index": 0, "Size": 1000}
    });
    let found = call(http, with, &format!("{base}/Accounts/Search"), search, None).await?;
    let listed = found["Accounts"].as_array().cloned().unwrap_or_default();
    Ok(listed
        .iter()
        .filter_map(|account| {
            Some(MicrosoftAccount {
                customer_id: account["ParentCustomerId"].as_i64()?.to_string(),
                account_id: account["Id"].as_i64()?.to_string(),
                name: account["Name"].as_str().unwrap_or("(no name)").to_owned(),
                number: account["Number"].as_str().unwrap_or_default().to_owned(),
            })
        })
        .collect())
}

/// The names of the account's offline conversion goals, what its conversions name
/// (`GetConversionGoalsByIds` with no ids and the `OfflineConversion` type,
/// <https://learn.microsoft.com/en-us/advertising/campaign-management-service/getconversiongoalsbyids?view=bingads-13>),
/// from the Campaign Management REST API at `campaign_base`. Paused goals are left out.
pub async fn offline_goals(
    http: &Outbound,
    app: &OAuthApp,
    grant: &OAuthGrant,
    (campaign_base, customer, account): (&str, &str, &str),
) -> Result<Vec<String>, String> {
    let url = format!(
        "{}/CampaignManagement/v13/ConversionGoals/QueryByIds",
        campaign_base.trim_end_matches('/')
    );
    let body = json!({"ConversionGoalIds": null, "ConversionGoalTypes": "OfflineConversion"});
    let found = call(http, (app, grant), &url, body, Some((customer, account))).await?;
    let goals = found["ConversionGoals"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut names: Vec<String> = goals
        .iter()
        .filter(|goal| goal["Status"].as_str() != Some("Paused"))
        .filter_map(|goal| goal["Name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

/// Where reports are asked for unless the source says otherwise: the Reporting API's REST
/// address (<https://learn.microsoft.com/en-us/advertising/guides/web-service-addresses>).
pub const DEFAULT_REPORTING_URL: &str = "https://reporting.api.bingads.microsoft.com";
/// The columns of the spend report, in their order in the file.
const SPEND_COLUMNS: [&str; 7] = [
    "TimePeriod",
    "CampaignId",
    "CampaignName",
    "CurrencyCode",
    "Spend",
    "Clicks",
    "Impressions",
];
/// How long to wait before each poll of a report: "Reports are usually available within
/// a few seconds"; a longer wait each time, about three minutes in all.
const POLL_WAITS_MS: [u64; 10] = [
    250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000, 60_000,
];

/// What the account `account` (`ACCOUNT:CUSTOMER`, its id and its customer's) spent per
/// campaign and day from `from` to `to`, read from the Reporting API at `base`: a daily
/// `CampaignPerformanceReportRequest` submitted (`GenerateReport/Submit`,
/// <https://learn.microsoft.com/en-us/advertising/reporting-service/submitgeneratereport?view=bingads-13>),
/// polled until done (`GenerateReport/Poll`,
/// <https://learn.microsoft.com/en-us/advertising/reporting-service/pollgeneratereport?view=bingads-13>),
/// and its zipped CSV downloaded
/// (<https://learn.microsoft.com/en-us/advertising/guides/request-download-report>). A
/// report with no data has no download address: no rows. Days a campaign neither spent
/// nor was clicked are left out.
pub async fn spend(
    http: &Outbound,
    with: (&OAuthApp, &OAuthGrant),
    (base, account): (&str, &str),
    (from, to): (NaiveDate, NaiveDate),
) -> Result<Vec<SpendRow>, String> {
    let (account_id, customer) = account
        .split_once(':')
        .ok_or("a Microsoft Advertising account is ACCOUNT:CUSTOMER, its id and its customer's")?;
    let ids = Some((customer, account_id));
    let base = format!(
        "{}/Reporting/v13/GenerateReport",
        base.trim_end_matches('/')
    );
    let day = |d: NaiveDate| json!({"Day": d.day(), "Month": d.month(), "Year": d.year()});
    let request = json!({"ReportRequest": {
        "Type": "CampaignPerformanceReportRequest",
        "ReportName": "leadtrack spend",
        "Format": "Csv",
        "FormatVersion": "2.0",
        "ExcludeReportHeader": true,
        "ExcludeReportFooter": true,
        "ExcludeColumnHeaders": false,
        "ReturnOnlyCompleteData": false,
        "Aggregation": "Daily",
        "Columns": SPEND_COLUMNS,
        "Scope": {"AccountIds": [account_id]},
        "Time": {"CustomDateRangeStart": day(from), "CustomDateRangeEnd": day(to)},
    }});
    let submitted = call(http, with, &format!("{base}/Submit"), request, ids).await?;
    let id = submitted["ReportRequestId"]
        .as_str()
        .ok_or("Microsoft Advertising gave no report request id")?;
    for wait in POLL_WAITS_MS {
        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
        let body = json!({"ReportRequestId": id});
        let polled = call(http, with, &format!("{base}/Poll"), body, ids).await?;
        let status = &polled["ReportRequestStatus"];
        match status["Status"].as_str() {
            Some("Success") => {
                return match status["ReportDownloadUrl"].as_str() {
                    Some(url) => download(http, url, account_id).await,
                    None => Ok(Vec::new()),
                };
            }
            Some("Pending") => continue,
            other => {
                return Err(format!(
                    "Microsoft Advertising could not make the report ({})",
                    other.unwrap_or("no status")
                ));
            }
        }
    }
    Err("Microsoft Advertising's report was not ready within three minutes".to_owned())
}

/// The report at `url`: a zip archive of one CSV file.
async fn download(http: &Outbound, url: &str, account: &str) -> Result<Vec<SpendRow>, String> {
    let answer = outcome::send(http.get(url))
        .await
        .map_err(|failed| crate::api::failure(&failed))?;
    if !answer.is_success() {
        return Err(format!(
            "Microsoft Advertising's report could not be downloaded (HTTP {})",
            answer.status
        ));
    }
    let unreadable = |_| "Microsoft Advertising's report is not a zip archive of a CSV file";
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(answer.body)).map_err(unreadable)?;
    let file = archive.by_index(0).map_err(unreadable)?;
    report_rows(file, account)
}

/// The rows of a report file whose columns are [`SPEND_COLUMNS`].
fn report_rows(file: impl std::io::Read, account: &str) -> Result<Vec<SpendRow>, String> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(file);
    let header: Vec<String> = reader
        .headers()
        .map_err(|_| "Microsoft Advertising's report has no header")?
        .iter()
        .map(|name| name.trim_start_matches('\u{feff}').to_owned())
        .collect();
    let at = |name: &str| header.iter().position(|h| h == name);
    let columns: Option<Vec<usize>> = SPEND_COLUMNS.iter().map(|name| at(name)).collect();
    let columns = columns.ok_or("Microsoft Advertising's report lacks a column asked for")?;
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|_| "Microsoft Advertising's report is not CSV")?;
        let field = |i: usize| record.get(columns[i]).unwrap_or_default().trim();
        let Ok(date) = NaiveDate::parse_from_str(field(0), "%Y-%m-%d")
            .or_else(|_| NaiveDate::parse_from_str(field(0), "%m/%d/%Y"))
        else {
            continue; // a footer's line
        };
        let cost_micros = leadtrack_core::spend::micros(field(4)).ok_or_else(|| {
            format!(
                "Microsoft Advertising's report gave the spend {:?}",
                field(4)
            )
        })?;
        let clicks = field(5).parse::<u64>().ok();
        if cost_micros == 0 && clicks.unwrap_or_default() == 0 {
            continue;
        }
        rows.push(SpendRow {
            date,
            source: SpendPlatform::MicrosoftAds.source().to_owned(),
            medium: "cpc".to_owned(),
            account: account.to_owned(),
            campaign_id: Some(field(1).to_owned()).filter(|id| !id.is_empty()),
            campaign: field(2).to_owned(),
            currency: field(3).to_owned(),
            cost_micros,
            clicks,
            impressions: field(6).parse().ok(),
        });
    }
    Ok(rows)
}
