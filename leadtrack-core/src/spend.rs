//! Ad spend: what each campaign cost per day ([`SpendRow`]), read from a CSV file
//! ([`parse_csv`]) or a platform's report, kept in its account's currency and converted to
//! the project's with the rates its owner sets ([`FxRates`]); and where spend meets the
//! leads it bought: the same source and campaign ([`source_key`], [`campaign_key`]).
//!
//! The report of spend against leads (cost per lead, per qualified lead, per customer, and
//! ROAS) is [`crate::roas`]'s.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use csv::ReaderBuilder;

use crate::import::BadRow;
use crate::matching::fold;

/// What one campaign cost on one day, as a platform's report or a file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpendRow {
    /// The day (the account's own day, as the platform reports it).
    pub date: NaiveDate,
    /// Where the ads ran, as [`source_key`] writes it (`google`, `meta`, `newsletter`).
    pub source: String,
    /// The medium, folded (`cpc`, `email`); empty when not given.
    pub medium: String,
    /// The platform's account the spend is of; empty for a file's rows.
    pub account: String,
    /// The platform's campaign id, when known.
    pub campaign_id: Option<String>,
    /// The campaign's name, as given.
    pub campaign: String,
    /// The currency of `cost_micros`, ISO 4217.
    pub currency: String,
    /// What it cost, in millionths of `currency` (Google Ads' unit; exact for every
    /// platform's decimals).
    pub cost_micros: i64,
    /// Clicks, when given.
    pub clicks: Option<u64>,
    /// Impressions, when given.
    pub impressions: Option<u64>,
}

impl SpendRow {
    /// What tells this row from another of the same day, source, medium and account: its
    /// campaign's id, else its name as [`campaign_key`] writes it. Stores keep one row per
    /// key and day, so that reading the same day again replaces it.
    pub fn key(&self) -> String {
        match &self.campaign_id {
            Some(id) => format!("id:{id}"),
            None => format!("name:{}", campaign_key(&self.campaign)),
        }
    }
}

/// An ad platform whose spend leadtrack reads with a project's sign-in.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::AsRefStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum SpendPlatform {
    /// Google Ads: GAQL over `campaign` by `segments.date`.
    GoogleAds,
    /// Meta: the ad account's Insights by campaign and day.
    Meta,
    /// Microsoft Advertising: a daily campaign performance report of the Reporting API.
    MicrosoftAds,
    /// LinkedIn: `adAnalytics` by campaign and day.
    Linkedin,
    /// TikTok: the integrated report by campaign and day, read with a token of its own.
    Tiktok,
}

impl SpendPlatform {
    /// The source its spend is of, as [`source_key`] writes it.
    pub fn source(self) -> &'static str {
        match self {
            Self::GoogleAds => "google",
            Self::Meta => "meta",
            Self::MicrosoftAds => "microsoft",
            Self::Linkedin => "linkedin",
            Self::Tiktok => "tiktok",
        }
    }

    /// The platform's name, as people know it.
    pub fn name(self) -> &'static str {
        match self {
            Self::GoogleAds => "Google Ads",
            Self::Meta => "Meta",
            Self::MicrosoftAds => "Microsoft Advertising",
            Self::Linkedin => "LinkedIn",
            Self::Tiktok => "TikTok",
        }
    }

    /// The sign-in its spend is read with; `None` for TikTok, read with the access token
    /// of the advertiser's own TikTok for Business app.
    pub fn provider(self) -> Option<crate::oauth::Provider> {
        use crate::oauth::Provider;
        match self {
            Self::GoogleAds => Some(Provider::Google),
            Self::Meta => Some(Provider::Meta),
            Self::MicrosoftAds => Some(Provider::Microsoft),
            Self::Linkedin => Some(Provider::Linkedin),
            Self::Tiktok => None,
        }
    }
}

/// Where a project's spend is read from: a platform's account, read with the project's
/// sign-in (or a token of its own), and how the last read went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpendSource {
    /// The platform.
    pub platform: SpendPlatform,
    /// The account: Google Ads' customer id (`1234567890`, or `CUSTOMER:MANAGER` for a
    /// client reached through its manager), Meta's ad account id (digits, without `act_`),
    /// Microsoft Advertising's `ACCOUNT:CUSTOMER` ids, LinkedIn's ad account id, TikTok's
    /// advertiser id.
    pub account: String,
    /// Where the platform's reporting API is, when not at its own address (a proxy, a
    /// test's mock); the server's rule for outbound addresses checks it as any other.
    pub base_url: Option<String>,
    /// A token of its own (TikTok's), kept sealed; `None` reads with the project's sign-in.
    pub access_token: Option<crate::integration::Secret>,
    /// When its spend was last read, well or not.
    pub synced_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Why the last read failed, in words; `None` when it went well.
    pub error: Option<String>,
}

impl SpendSource {
    /// `platform`'s `account`, read with the project's sign-in at the platform's own
    /// address, and not read yet.
    pub fn new(platform: SpendPlatform, account: &str) -> Self {
        Self {
            platform,
            account: account.to_owned(),
            base_url: None,
            access_token: None,
            synced_at: None,
            error: None,
        }
    }
}

/// How many days before today a read of spend covers: platforms revise the figures of
/// the last few days (late clicks, invalid-click credits).
pub const SYNC_DAYS: u64 = 3;

/// The ad platforms whose clicks and spend leadtrack knows, by the names a `utm_source`
/// (or a spend file) gives them: `(name, written as)`.
const SOURCE_NAMES: [(&str, &[&str]); 5] = [
    (
        "google",
        &["google", "adwords", "google ads", "googleads", "youtube"],
    ),
    (
        "meta",
        &["meta", "facebook", "fb", "instagram", "ig", "facebook ads"],
    ),
    (
        "microsoft",
        &[
            "microsoft",
            "bing",
            "microsoft ads",
            "microsoft advertising",
        ],
    ),
    ("linkedin", &["linkedin", "lnkd", "linkedin ads"]),
    ("tiktok", &["tiktok", "tiktok ads"]),
];

/// Where a lead carries the id of the ad campaign it came from, in `attributionData`, first
/// found first: the `utm_id` of its landing page's URL (the platform its source names), and
/// the campaign ids of Meta's and Google's lead forms (`metaCampaignId`, `googleCampaignId`,
/// their platform's). A store keeps the id as `platform:id` where the field names the
/// platform, else as the id alone ([`lead_campaign_id`] reads it back).
pub const CAMPAIGN_ID_FIELDS: [(&str, Option<&str>); 3] = [
    ("utm_id", None),
    ("metaCampaignId", Some("meta")),
    ("googleCampaignId", Some("google")),
];

/// A lead's campaign id as a store keeps it ([`CAMPAIGN_ID_FIELDS`]): the platform it names,
/// if any, and the id.
pub fn lead_campaign_id(kept: &str) -> (Option<&'static str>, &str) {
    CAMPAIGN_ID_FIELDS
        .iter()
        .filter_map(|(_, platform)| *platform)
        .find_map(|platform| {
            let id = kept.strip_prefix(platform)?.strip_prefix(':')?;
            Some((Some(platform), id))
        })
        .unwrap_or((None, kept))
}

/// A source as spend and leads are matched by: folded (case, accents and surrounding spaces
/// dropped), and the ad platforms by one name each (`Facebook`, `fb` and `ig` are `meta`;
/// `bing` is `microsoft`).
pub fn source_key(source: &str) -> String {
    let folded = fold(source.trim());
    SOURCE_NAMES
        .iter()
        .find(|(_, names)| names.contains(&folded.as_str()))
        .map_or(folded, |(name, _)| (*name).to_owned())
}

/// A campaign's name as spend and leads are matched by: folded, with runs of spaces as one
/// (`Spring Sale ` and `spring  sale` are one campaign).
pub fn campaign_key(campaign: &str) -> String {
    fold(campaign)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The source a lead's click id names, for a lead whose touches say nothing: Google's
/// `gclid`, `gbraid` or `wbraid`, Meta's `fbclid` (or its `_fbc` cookie), Microsoft's
/// `msclkid`, LinkedIn's `li_fat_id`, TikTok's `ttclid`; in that order.
pub fn source_of_click(clicked: ClickIds) -> Option<&'static str> {
    [
        (clicked.google, "google"),
        (clicked.meta, "meta"),
        (clicked.microsoft, "microsoft"),
        (clicked.linkedin, "linkedin"),
        (clicked.tiktok, "tiktok"),
    ]
    .into_iter()
    .find(|(has, _)| *has)
    .map(|(_, source)| source)
}

/// Which ad platforms' click ids a lead carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClickIds {
    /// `gclid`, `gbraid` or `wbraid`.
    pub google: bool,
    /// `fbclid`'s `_fbc` cookie.
    pub meta: bool,
    /// `msclkid`.
    pub microsoft: bool,
    /// `li_fat_id`.
    pub linkedin: bool,
    /// `ttclid`.
    pub tiktok: bool,
}

impl ClickIds {
    /// The click ids of `bits`, as a store may keep them: Google's the lowest bit, then
    /// Meta's, Microsoft's, LinkedIn's and TikTok's.
    pub fn from_bits(bits: i64) -> Self {
        let bit = |n: u32| bits & (1 << n) != 0;
        Self {
            google: bit(0),
            meta: bit(1),
            microsoft: bit(2),
            linkedin: bit(3),
            tiktok: bit(4),
        }
    }
}

/// How many units of a project's currency one unit of another is worth, by currency: the
/// rates its owner sets (`EUR=1.08`). Nothing is fetched from outside.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FxRates(pub BTreeMap<String, f64>);

impl FxRates {
    /// Reads `CUR=RATE` pairs (`EUR=1.08`): a three-letter code and a positive rate.
    ///
    /// Errors: the pair that is not one, in words.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut rates = BTreeMap::new();
        for pair in pairs {
            let (currency, rate) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?} is not CURRENCY=RATE (EUR=1.08)"))?;
            let currency = currency.trim().to_ascii_uppercase();
            if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(format!("{currency:?} is not a three-letter currency code"));
            }
            let rate: f64 = rate
                .trim()
                .parse()
                .ok()
                .filter(|rate: &f64| rate.is_finite() && *rate > 0.0)
                .ok_or_else(|| format!("the rate of {currency} is not a positive number"))?;
            rates.insert(currency, rate);
        }
        Ok(Self(rates))
    }

    /// `micros` of `currency` in units of the project's currency `project`: as they are in
    /// it, else at the owner's rate; `None` without one.
    pub fn convert(&self, micros: i64, currency: &str, project: &str) -> Option<f64> {
        let units = micros as f64 / 1_000_000.0;
        if currency.eq_ignore_ascii_case(project) {
            return Some(units);
        }
        self.0.get(currency).map(|rate| units * rate)
    }

    /// The rates as the command line and the dashboard write them: `EUR=1.08 GBP=1.27`.
    pub fn written(&self) -> String {
        self.0
            .iter()
            .map(|(currency, rate)| format!("{currency}={rate}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The columns of a spend file, in any order: `date,source,medium,campaign,cost`, and
/// optionally `currency,clicks,impressions` (and `campaign_id`).
const REQUIRED: [&str; 5] = ["date", "source", "medium", "campaign", "cost"];

/// The rows of a spend file, and the rows that are not spend with their line and why
/// (the header is line 1). A row without a currency is in `currency`, the project's.
///
/// Errors: the file has no header, or the header lacks a column, in words.
pub fn parse_csv(bytes: &[u8], currency: &str) -> Result<(Vec<SpendRow>, Vec<BadRow>), String> {
    let mut reader = ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|_| "the file has no header row".to_owned())?
        .iter()
        .map(|name| name.trim_start_matches('\u{feff}').to_ascii_lowercase())
        .collect();
    let column = |name: &str| headers.iter().position(|header| header == name);
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|name| column(name).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the header lacks {}: a spend file has the columns date,source,medium,campaign,cost (and may have currency,clicks,impressions)",
            missing.join(", ")
        ));
    }
    let (mut rows, mut bad) = (Vec::new(), Vec::new());
    for (at, record) in reader.records().enumerate() {
        let line = at as u64 + 2;
        let Ok(record) = record else {
            bad.push(BadRow {
                line,
                reason: "the row cannot be read as CSV".to_owned(),
            });
            continue;
        };
        let get = |name: &str| column(name).and_then(|at| record.get(at)).unwrap_or("");
        match row(get, currency) {
            Ok(row) => rows.push(row),
            Err(reason) => bad.push(BadRow { line, reason }),
        }
    }
    Ok((rows, bad))
}

/// One file row as spend, or why it is not.
fn row<'a>(get: impl Fn(&str) -> &'a str, currency: &str) -> Result<SpendRow, String> {
    let date = NaiveDate::parse_from_str(get("date"), "%Y-%m-%d")
        .map_err(|_| format!("the date {:?} is not YYYY-MM-DD", get("date")))?;
    let source = source_key(get("source"));
    if source.is_empty() {
        return Err("the source is empty".to_owned());
    }
    let campaign = get("campaign").to_owned();
    if campaign.is_empty() {
        return Err("the campaign is empty".to_owned());
    }
    let cost_micros = micros(get("cost"))
        .ok_or_else(|| format!("the cost {:?} is not an amount (1234.56)", get("cost")))?;
    let currency = match get("currency") {
        "" => currency.to_owned(),
        given if given.len() == 3 && given.chars().all(|c| c.is_ascii_alphabetic()) => {
            given.to_ascii_uppercase()
        }
        given => return Err(format!("the currency {given:?} is not a three-letter code")),
    };
    let count = |name: &str| -> Result<Option<u64>, String> {
        match get(name) {
            "" => Ok(None),
            given => given
                .parse()
                .map(Some)
                .map_err(|_| format!("the {name} {given:?} are not a whole number")),
        }
    };
    Ok(SpendRow {
        date,
        source,
        medium: fold(get("medium")),
        account: String::new(),
        campaign_id: Some(get("campaign_id"))
            .filter(|id| !id.is_empty())
            .map(str::to_owned),
        campaign,
        currency,
        cost_micros,
        clicks: count("clicks")?,
        impressions: count("impressions")?,
    })
}

/// An amount written with a point for decimals (`1234.56`, at most six places) in
/// millionths; `None` for anything else, or less than zero.
pub fn micros(amount: &str) -> Option<i64> {
    let (whole, fraction) = amount.split_once('.').unwrap_or((amount, ""));
    let digits = |text: &str| text.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 6 {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let fraction: i64 = format!("{fraction:0<6}").parse().ok()?;
    whole.checked_mul(1_000_000)?.checked_add(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_matched_by_one_name_per_platform() {
        assert_eq!(source_key(" Facebook "), "meta");
        assert_eq!(source_key("IG"), "meta");
        assert_eq!(source_key("bing"), "microsoft");
        assert_eq!(source_key("Google Ads"), "google");
        assert_eq!(source_key("Newsletter Ümlaut"), "newsletter umlaut");
        assert_eq!(campaign_key(" Spring  Sále "), "spring sale");
    }

    #[test]
    fn a_click_id_names_its_platform() {
        let clicked = ClickIds {
            microsoft: true,
            tiktok: true,
            ..ClickIds::default()
        };
        assert_eq!(source_of_click(clicked), Some("microsoft"));
        assert_eq!(source_of_click(ClickIds::default()), None);
    }

    #[test]
    fn amounts_are_exact_in_millionths() {
        assert_eq!(micros("1000"), Some(1_000_000_000));
        assert_eq!(micros("12.5"), Some(12_500_000));
        assert_eq!(micros("0.000001"), Some(1));
        for bad in ["", "-1", "1,000.00", "1.2345678", "12e3", ".5"] {
            assert_eq!(micros(bad), None, "{bad}");
        }
    }

    #[test]
    fn rates_convert_other_currencies_and_refuse_nonsense() {
        let rates = FxRates::parse(["eur=1.08", "GBP = 1.25"]).unwrap();
        assert_eq!(rates.written(), "EUR=1.08 GBP=1.25");
        assert_eq!(rates.convert(2_000_000, "EUR", "USD"), Some(2.16));
        assert_eq!(rates.convert(2_000_000, "usd", "USD"), Some(2.0));
        assert_eq!(rates.convert(2_000_000, "JPY", "USD"), None);
        assert!(FxRates::parse(["EUR"]).is_err());
        assert!(FxRates::parse(["EURO=1"]).is_err());
        assert!(FxRates::parse(["EUR=0"]).is_err());
        assert!(FxRates::parse(["EUR=abc"]).is_err());
    }

    #[test]
    fn a_file_gives_its_rows_and_names_the_bad_ones_by_line() {
        let file = "\u{feff}Date,Source,Medium,Campaign,Cost,Currency,Clicks\n\
                    2026-03-01,Newsletter,email,Spring issue,250.00,,\n\
                    2026-03-01,facebook,paid social,Spring Sale,100.5,EUR,42\n\
                    03/01/2026,google,cpc,Brand,10,,\n\
                    2026-03-02,google,cpc,Brand,ten,,\n\
                    2026-03-02,google,cpc,Brand,10,,many\n";
        let (rows, bad) = parse_csv(file.as_bytes(), "USD").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].source, "newsletter");
        assert_eq!(rows[0].currency, "USD");
        assert_eq!(rows[0].cost_micros, 250_000_000);
        assert_eq!(rows[1].source, "meta");
        assert_eq!(rows[1].medium, "paid social");
        assert_eq!(rows[1].currency, "EUR");
        assert_eq!(rows[1].clicks, Some(42));
        assert_eq!(rows[1].key(), "name:spring sale");
        let lines: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            lines,
            [
                (4, "the date \"03/01/2026\" is not YYYY-MM-DD"),
                (5, "the cost \"ten\" is not an amount (1234.56)"),
                (6, "the clicks \"many\" are not a whole number"),
            ]
        );
        let err = parse_csv(b"date,source,cost\n", "USD").unwrap_err();
        assert!(
            err.starts_with("the header lacks medium, campaign"),
            "{err}"
        );
    }
}
