//! The query strings of getLeads and getLead (CONTRACT.md section 4), parsed from decoded
//! `(name, value)` pairs and written back to pairs by the typed client.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use strum::{AsRefStr, EnumString, VariantArray};

use super::fields;
use crate::error::ValidationError;
use crate::lead::StoredLead;
use crate::matching;
use crate::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus, UserId};

/// Leads per page when `limit` is absent.
pub const DEFAULT_LIMIT: u32 = 50;
/// The largest `limit`.
pub const MAX_LIMIT: u32 = 100;
/// The shortest `search` term, in characters.
pub const MIN_SEARCH_CHARS: usize = 2;
/// How many matches of a `q` search are counted at least before its count stops
/// ([`LeadQuery::counted`]).
pub const Q_COUNTED: u64 = 1_000;

/// A field getLeads sorts by, named in `sort` as written here (`createdAt`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsRefStr, EnumString, VariantArray)]
#[strum(serialize_all = "camelCase")]
pub enum SortField {
    /// `createdAt`
    CreatedAt,
    /// `firstName`
    FirstName,
    /// `lastName`
    LastName,
    /// `email`
    Email,
    /// `price`
    Price,
    /// `status`
    Status,
}

/// Ascending or descending, named `asc` and `desc` in `sort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsRefStr, EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum SortDirection {
    /// `asc`
    Asc,
    /// `desc`
    Desc,
}

/// `sort=field:direction`. Nulls sort last in both directions; ties break on the lead id in
/// the same direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sort {
    /// The field.
    pub field: SortField,
    /// The direction.
    pub direction: SortDirection,
}

impl Default for Sort {
    /// Newest first: `createdAt:desc`.
    fn default() -> Self {
        Self {
            field: SortField::CreatedAt,
            direction: SortDirection::Desc,
        }
    }
}

/// A lead's value of a [`SortField`]: where it stands in a sort order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// `createdAt`.
    CreatedAt(DateTime<Utc>),
    /// `firstName`, `lastName`, or the email's key; `None` when the lead has none.
    Text(Option<String>),
    /// `price`; `None` when the lead has none.
    Price(Option<i64>),
    /// `status`.
    Status(LeadStatus),
}

/// Where the next batch of a listing read in batches (keyset pagination) begins: strictly
/// after this lead in the query's order, so batches neither repeat nor skip a lead however
/// many leads come before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The lead's id, which breaks ties.
    pub id: LeadId,
    /// The lead's value of the sort field.
    pub key: SortKey,
}

impl Cursor {
    /// The cursor after `lead` (the last lead of a batch) in an order by `field`. Emails
    /// sort by their [`crate::matching::email_key`], so that is the key of an email sort.
    pub fn after(lead: &StoredLead, field: SortField) -> Self {
        let text = |name: &str| SortKey::Text(lead.data.user(name).map(str::to_owned));
        let key = match field {
            SortField::CreatedAt => SortKey::CreatedAt(lead.created_at),
            SortField::FirstName => text("firstName"),
            SortField::LastName => text("lastName"),
            SortField::Email => {
                SortKey::Text(lead.data.user("email").and_then(crate::matching::email_key))
            }
            SortField::Price => SortKey::Price(lead.price),
            SortField::Status => SortKey::Status(lead.status),
        };
        Self { id: lead.id, key }
    }
}

/// How [`LeadQuery::to_pairs`] writes `status` for an empty list of statuses: no lead has it.
const NO_STATUS: &str = "none";

/// A getLeads query: filters (combined with AND), sort and page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeadQuery {
    /// Leads per page, 1 to [`MAX_LIMIT`].
    pub limit: u32,
    /// The page, from 1.
    pub page: u32,
    /// Leads whose status is any of these. Unknown names given in `status` match no lead,
    /// so `Some(vec![])` matches nothing.
    pub status: Option<Vec<LeadStatus>>,
    /// Exact, case-sensitive form name.
    pub form_name: Option<String>,
    /// A form name whatever its case: the [`crate::matching::form_key`] of the `form`
    /// parameter, compared with each lead's.
    pub form: Option<String>,
    /// The first touch's source ([`crate::report::touch_columns`]), exact.
    pub source: Option<String>,
    /// The first touch's medium, exact.
    pub medium: Option<String>,
    /// The first touch's campaign, exact.
    pub campaign: Option<String>,
    /// The lead's last rating: `lost` or a label ([`crate::lead::StoredLead::conversion_id`]).
    pub conversion: Option<ConversionId>,
    /// Exact `uniqueIdentifier`.
    pub unique_identifier: Option<String>,
    /// Email, by the matching rule of [`crate::matching::email_key`].
    pub email: Option<String>,
    /// Phone, by the matching rule of [`crate::matching::phone_key`].
    pub phone: Option<String>,
    /// Created at or after.
    pub created_from: Option<DateTime<Utc>>,
    /// Created at or before.
    pub created_to: Option<DateTime<Utc>>,
    /// Case-insensitive substring of first or last name, email, phone or company name.
    /// Every character is looked for as it is, a NUL byte or a quote included.
    pub search: Option<String>,
    /// The words of a `q` search ([`crate::matching::q_words`]): a lead matches when each
    /// is in its `q` text (the store's `q_text`), whatever the case and accents. Empty: no
    /// `q`.
    pub q: Vec<String>,
    /// The order.
    pub sort: Sort,
    /// Whether `attributionData.gclid` must be non-empty (`true`) or empty (`false`).
    pub gclid_exists: Option<bool>,
    /// The same for `cid`.
    pub cid_exists: Option<bool>,
    /// The same for `fbp`.
    pub fbp_exists: Option<bool>,
    /// The same for `fbc`.
    pub fbc_exists: Option<bool>,
    /// The same for `msclkid` (Microsoft Advertising's click id).
    pub msclkid_exists: Option<bool>,
    /// The same for `li_fat_id` (LinkedIn's click id).
    pub li_fat_id_exists: Option<bool>,
    /// The same for Google's click ids of iOS campaigns, `gbraid` or `wbraid` (either
    /// counts).
    pub gbraid_exists: Option<bool>,
    /// The same for `ttclid` (TikTok's click id).
    pub ttclid_exists: Option<bool>,
    /// The same for `rdt_cid` (Reddit's click id).
    pub rdt_cid_exists: Option<bool>,
    /// The same for `ScCid` (Snapchat's click id).
    pub sccid_exists: Option<bool>,
    /// The same for Pinterest's click id, `epik` or its cookie `_epik` (either counts).
    pub epik_exists: Option<bool>,
    /// The same for `twclid` (X's click id).
    pub twclid_exists: Option<bool>,
    /// Duplicates only, or the duplicates of one lead (the dashboard's; no API parameter).
    pub duplicates: Option<DuplicateFilter>,
    /// Leads assigned to one member, or to nobody (the dashboard's; no API parameter).
    pub assignee: Option<AssigneeFilter>,
}

/// A filter a store keeps counts by: a column of the lead's row and the value wanted.
/// Both backends keep, per project, status and facet value, how many leads have it, so a
/// listing filtered by one facet alone counts its total and tabs without a scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facet {
    /// The column (`form_key`, `first_source`, `has_gclid`, ...), also the facet's name in
    /// the kept counts.
    pub column: &'static str,
    /// The value wanted.
    pub value: FacetValue,
}

impl Facet {
    fn text(column: &'static str, value: String) -> Self {
        Self {
            column,
            value: FacetValue::Text(value),
        }
    }
}

/// The value a [`Facet`] wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FacetValue {
    /// A text column's value.
    Text(String),
    /// A click-id presence column's: whether the lead has it.
    Flag(bool),
}

/// Which duplicates a listing shows ([`crate::lead::StoredLead::duplicate_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateFilter {
    /// Every lead that duplicates another.
    All,
    /// The leads that duplicate this one.
    Of(LeadId),
}

impl DuplicateFilter {
    /// The SQL condition of the filter, the same for both backends.
    pub fn condition(self) -> String {
        match self {
            Self::All => "duplicate_of IS NOT NULL".to_owned(),
            Self::Of(lead) => format!("duplicate_of = {}", lead.0),
        }
    }
}

/// Whose leads a listing shows ([`crate::lead::StoredLead::assignee`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssigneeFilter {
    /// The leads assigned to nobody.
    Nobody,
    /// The leads assigned to this user.
    User(UserId),
}

impl AssigneeFilter {
    /// The SQL condition of the filter, the same for both backends.
    pub fn condition(self) -> String {
        match self {
            Self::Nobody => "assigned_to IS NULL".to_owned(),
            Self::User(user) => format!("assigned_to = {}", user.0),
        }
    }
}

impl Default for LeadQuery {
    fn default() -> Self {
        Self {
            limit: DEFAULT_LIMIT,
            page: 1,
            status: None,
            form_name: None,
            form: None,
            source: None,
            medium: None,
            campaign: None,
            conversion: None,
            unique_identifier: None,
            email: None,
            phone: None,
            created_from: None,
            created_to: None,
            search: None,
            q: Vec::new(),
            sort: Sort::default(),
            gclid_exists: None,
            cid_exists: None,
            fbp_exists: None,
            fbc_exists: None,
            msclkid_exists: None,
            li_fat_id_exists: None,
            gbraid_exists: None,
            ttclid_exists: None,
            rdt_cid_exists: None,
            sccid_exists: None,
            epik_exists: None,
            twclid_exists: None,
            duplicates: None,
            assignee: None,
        }
    }
}

/// The `[exists]` filters: parameter name and the query field it sets.
const EXISTS_PARAMS: [&str; 12] = [
    "gclid[exists]",
    "cid[exists]",
    "fbp[exists]",
    "fbc[exists]",
    "msclkid[exists]",
    "li_fat_id[exists]",
    "gbraid[exists]",
    "ttclid[exists]",
    "rdt_cid[exists]",
    "ScCid[exists]",
    "epik[exists]",
    "twclid[exists]",
];

/// Decoded query parameters; the first occurrence of a name counts.
struct Params(HashMap<String, String>);

impl Params {
    fn new<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let mut map = HashMap::new();
        for (name, value) in pairs {
            map.entry(name.as_ref().to_owned())
                .or_insert_with(|| value.as_ref().to_owned());
        }
        Self(map)
    }

    fn raw(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// A filter value: empty values count as absent.
    fn filter(&self, name: &str, trim: bool) -> Option<String> {
        let value = self.raw(name)?;
        let value = if trim { value.trim() } else { value };
        (!value.is_empty()).then(|| value.to_owned())
    }
}

impl LeadQuery {
    /// Parses getLeads parameters. Unknown parameters are ignored.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ValidationError> {
        let params = Params::new(pairs);
        let mut exists = [None; EXISTS_PARAMS.len()];
        for (slot, name) in exists.iter_mut().zip(EXISTS_PARAMS) {
            *slot = params.raw(name).map(|v| parse_bool(name, v)).transpose()?;
        }
        let query = Self {
            limit: match params.raw("limit") {
                None => DEFAULT_LIMIT,
                Some(v) => parse_number(v)
                    .filter(|n| (1..=u64::from(MAX_LIMIT)).contains(n))
                    .map(|n| n as u32)
                    .ok_or_else(|| {
                        ValidationError::invalid_query("limit", "must be an integer from 1 to 100")
                    })?,
            },
            page: match params.raw("page") {
                None => 1,
                Some(v) => parse_number(v)
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| {
                        ValidationError::invalid_query("page", "must be an integer of at least 1")
                    })?,
            },
            status: params.raw("status").and_then(parse_statuses),
            form_name: params.filter("formName", false),
            form: params
                .filter("form", false)
                .map(|form| matching::form_key(&form)),
            source: params.filter("source", false),
            medium: params.filter("medium", false),
            campaign: params.filter("campaign", false),
            conversion: params
                .filter("conversionId", false)
                .map(|value| parse_conversion(&value))
                .transpose()?,
            unique_identifier: params.filter("uniqueIdentifier", false),
            email: params.filter("email", true),
            phone: params.filter("phone", true),
            created_from: params
                .raw("createdAt[gte]")
                .map(|v| parse_bound("createdAt[gte]", v, false))
                .transpose()?,
            created_to: params
                .raw("createdAt[lte]")
                .map(|v| parse_bound("createdAt[lte]", v, true))
                .transpose()?,
            search: params.raw("search").map(parse_search).transpose()?,
            q: params
                .raw("q")
                .map(parse_q)
                .transpose()?
                .unwrap_or_default(),
            sort: params
                .raw("sort")
                .map(parse_sort)
                .transpose()?
                .unwrap_or_default(),
            ..Self::default()
        };
        Ok(query.with_presence_filters(exists))
    }

    /// The query as parameters, for a client to send. Parsing them gives this query back.
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = vec![
            ("limit".to_owned(), self.limit.to_string()),
            ("page".to_owned(), self.page.to_string()),
        ];
        let mut push = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                pairs.push((name.to_owned(), value));
            }
        };
        push(
            "status",
            self.status.as_ref().map(|statuses| {
                if statuses.is_empty() {
                    // An empty value is no filter at all; a name that is no status keeps
                    // "matches nothing".
                    return NO_STATUS.to_owned();
                }
                statuses
                    .iter()
                    .map(LeadStatus::as_ref)
                    .collect::<Vec<_>>()
                    .join(",")
            }),
        );
        push("formName", self.form_name.clone());
        push("form", self.form.clone());
        push("source", self.source.clone());
        push("medium", self.medium.clone());
        push("campaign", self.campaign.clone());
        push("conversionId", self.conversion.map(|c| c.to_string()));
        push("uniqueIdentifier", self.unique_identifier.clone());
        push("email", self.email.clone());
        push("phone", self.phone.clone());
        push(
            "createdAt[gte]",
            self.created_from.as_ref().map(crate::time::format),
        );
        push(
            "createdAt[lte]",
            self.created_to.as_ref().map(crate::time::format),
        );
        push("search", self.search.clone());
        push("q", (!self.q.is_empty()).then(|| self.q.join(" ")));
        if self.sort != Sort::default() {
            push(
                "sort",
                Some(format!(
                    "{}:{}",
                    self.sort.field.as_ref(),
                    self.sort.direction.as_ref()
                )),
            );
        }
        for (name, (_, value)) in EXISTS_PARAMS.into_iter().zip(self.presence_filters()) {
            push(name, value.map(|v| v.to_string()));
        }
        pairs
    }

    /// The statuses the query lists: those it names, else [`LeadStatus::LISTED`] (every
    /// status but spam).
    pub fn statuses(&self) -> &[LeadStatus] {
        self.status.as_deref().unwrap_or(&LeadStatus::LISTED)
    }

    /// The statuses the query lists ([`Self::statuses`]), when they are its only filter:
    /// its total is then the count of the project's leads in those statuses.
    pub fn only_statuses(&self) -> Option<&[LeadStatus]> {
        let statuses = self.statuses();
        let others = Self {
            status: None,
            ..self.clone()
        };
        others.is_unfiltered().then_some(statuses)
    }

    /// The click-id presence filters (in the order of the query parameters), each with
    /// the column both backends keep for it: `(column, wanted)`.
    pub fn presence_filters(&self) -> [(&'static str, Option<bool>); 12] {
        [
            ("has_gclid", self.gclid_exists),
            ("has_cid", self.cid_exists),
            ("has_fbp", self.fbp_exists),
            ("has_fbc", self.fbc_exists),
            ("has_msclkid", self.msclkid_exists),
            ("has_li_fat_id", self.li_fat_id_exists),
            ("has_gbraid", self.gbraid_exists),
            ("has_ttclid", self.ttclid_exists),
            ("has_rdt_cid", self.rdt_cid_exists),
            ("has_sccid", self.sccid_exists),
            ("has_epik", self.epik_exists),
            ("has_twclid", self.twclid_exists),
        ]
    }

    /// The query with its click-id presence filters set, in the order of
    /// [`Self::presence_filters`].
    pub fn with_presence_filters(mut self, wanted: [Option<bool>; 12]) -> Self {
        [
            self.gclid_exists,
            self.cid_exists,
            self.fbp_exists,
            self.fbc_exists,
            self.msclkid_exists,
            self.li_fat_id_exists,
            self.gbraid_exists,
            self.ttclid_exists,
            self.rdt_cid_exists,
            self.sccid_exists,
            self.epik_exists,
            self.twclid_exists,
        ] = wanted;
        self
    }

    /// Whether the query's status filter lists a lead of `status`: a status it names, or
    /// any but spam when it names none (as the listings' [`crate::store::sql::NOT_SPAM`]).
    pub fn lists(&self, status: LeadStatus) -> bool {
        match &self.status {
            Some(statuses) => statuses.contains(&status),
            None => status != LeadStatus::Spam,
        }
    }

    /// The query with every status, spam included, for its status filter: what a count
    /// per status counts.
    pub fn any_status(&self) -> Self {
        Self {
            status: Some(LeadStatus::VARIANTS.to_vec()),
            ..self.clone()
        }
    }

    /// Whether the query filters nothing (only sorts and pages), so its total is the
    /// project's lead count.
    pub fn is_unfiltered(&self) -> bool {
        let Self {
            limit: _,
            page: _,
            sort: _,
            status,
            form_name: _,
            form: _,
            source: _,
            medium: _,
            campaign: _,
            conversion: _,
            unique_identifier,
            email,
            phone,
            created_from,
            created_to,
            search,
            q,
            // The facets, as `facets` gives them.
            // The click-id filters, as `presence_filters` gives them.
            gclid_exists: _,
            cid_exists: _,
            fbp_exists: _,
            fbc_exists: _,
            msclkid_exists: _,
            li_fat_id_exists: _,
            gbraid_exists: _,
            ttclid_exists: _,
            rdt_cid_exists: _,
            sccid_exists: _,
            epik_exists: _,
            twclid_exists: _,
            duplicates,
            assignee,
        } = self;
        status.is_none()
            && duplicates.is_none()
            && assignee.is_none()
            && unique_identifier.is_none()
            && email.is_none()
            && phone.is_none()
            && created_from.is_none()
            && created_to.is_none()
            && search.is_none()
            && q.is_empty()
            && self.facets().is_empty()
    }

    /// The facets a listing filters by: [`Self::facets`], and for a form's exact name also
    /// its key (the name lowercased). Both backends find a form name's leads through the
    /// key's index, which every lead is in, and check each for the name, so that the name
    /// needs no index of its own written with each lead.
    pub fn facet_filters(&self) -> Vec<Facet> {
        let mut facets = self.facets();
        if let Some(name) = &self.form_name {
            facets.insert(0, Facet::text("form_key", matching::form_key(name)));
        }
        facets
    }

    /// The filters set among those a store keeps counts by (per project, value and status;
    /// see [`Facet`]): the form (exact, or whatever its case), the first touch's source,
    /// medium and campaign, the rating, and the click-id presence filters.
    pub fn facets(&self) -> Vec<Facet> {
        let text = [
            ("form_name", &self.form_name),
            ("form_key", &self.form),
            ("first_source", &self.source),
            ("first_medium", &self.medium),
            ("first_campaign", &self.campaign),
        ]
        .into_iter()
        .filter_map(|(column, value)| Some(Facet::text(column, value.clone()?)));
        let rating = self
            .conversion
            .map(|c| Facet::text("conversion_id", c.to_string()));
        let presence = self
            .presence_filters()
            .into_iter()
            .filter_map(|(column, wanted)| {
                Some(Facet {
                    column,
                    value: FacetValue::Flag(wanted?),
                })
            });
        text.chain(rating).chain(presence).collect()
    }

    /// The one kept-count filter of a query that filters by nothing else but status: its
    /// total and tab counts are then read from the store's kept counts.
    pub fn only_facet(&self) -> Option<Facet> {
        let mut facets = self.facets();
        let others = Self {
            status: None,
            form_name: None,
            form: None,
            source: None,
            medium: None,
            campaign: None,
            conversion: None,
            ..self.clone()
        }
        .with_presence_filters([None; 12]);
        (facets.len() == 1 && others.is_unfiltered()).then(|| facets.remove(0))
    }

    /// The range of creation times (`created_from`, `created_to`, inclusive) of a query
    /// that filters by nothing else but status: its total and tab counts are then read
    /// from counts a store keeps per hour of creation, rather than counted lead by lead.
    pub fn only_dates(&self) -> Option<CreatedRange> {
        let others = Self {
            status: None,
            created_from: None,
            created_to: None,
            ..self.clone()
        };
        let dated = self.created_from.is_some() || self.created_to.is_some();
        (dated && others.is_unfiltered()).then_some((self.created_from, self.created_to))
    }

    /// How many leads precede this page.
    pub fn offset(&self) -> u64 {
        u64::from(self.page - 1) * u64::from(self.limit)
    }

    /// How many matches a count of this query stops at: `None` (all of them) but for a `q`
    /// search, which counts up to [`Q_COUNTED`] or its page's end, whichever is further,
    /// and one more to tell whether more match. A search box's words can match every
    /// lead, and counting a million matches exactly costs a pass over them all.
    pub fn counted(&self) -> Option<u64> {
        (!self.q.is_empty()).then(|| Q_COUNTED.max(self.offset() + u64::from(self.limit)) + 1)
    }

    /// Whether `counted` leads, counted for this query up to [`LeadQuery::counted`], are
    /// all the matches; else they are a lower bound.
    pub fn counted_all(&self, counted: u64) -> bool {
        self.counted().is_none_or(|bound| counted < bound)
    }
}

/// A range of creation times, inclusive: `(from, to)`, open at an end that is `None`.
pub type CreatedRange = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

fn parse_number(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

fn parse_bool(name: &str, value: &str) -> Result<bool, ValidationError> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(ValidationError::invalid_query(
            name,
            "must be true or false (or 1 or 0)",
        )),
    }
}

fn parse_statuses(value: &str) -> Option<Vec<LeadStatus>> {
    let items: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    (!items.is_empty()).then(|| {
        let mut statuses: Vec<LeadStatus> = items.iter().filter_map(|i| i.parse().ok()).collect();
        statuses.dedup();
        statuses
    })
}

/// `conversionId` as a filter: `lost` or a label's UUID, hyphenated as labels are written
/// (`open` is the Open tab's).
fn parse_conversion(value: &str) -> Result<ConversionId, ValidationError> {
    let written = value == "lost" || value.len() == 36;
    match value.parse().ok().filter(|_| written) {
        Some(ConversionId::Open) | None => Err(ValidationError::invalid_query(
            "conversionId",
            "must be lost or a conversion label's UUID",
        )),
        Some(conversion) => Ok(conversion),
    }
}

fn parse_search(value: &str) -> Result<String, ValidationError> {
    let term = value.trim();
    if term.chars().count() < MIN_SEARCH_CHARS {
        return Err(ValidationError::invalid_query(
            "search",
            "must be at least 2 characters",
        ));
    }
    Ok(term.to_owned())
}

/// `q`'s words: trimmed, at least 2 characters (as `search`), then split and folded.
fn parse_q(value: &str) -> Result<Vec<String>, ValidationError> {
    if value.trim().chars().count() < MIN_SEARCH_CHARS {
        return Err(ValidationError::invalid_query(
            "q",
            "must be at least 2 characters",
        ));
    }
    Ok(matching::q_words(value))
}

fn parse_sort(value: &str) -> Result<Sort, ValidationError> {
    let invalid = || {
        ValidationError::invalid_query(
            "sort",
            "must be field:direction with field one of createdAt, firstName, lastName, email, price, status and direction asc or desc",
        )
    };
    let (field, direction) = match value.split_once(':') {
        Some((field, direction)) => (field, Some(direction)),
        None => (value, None),
    };
    let field: SortField = field.parse().map_err(|_| invalid())?;
    let direction = match direction {
        None => SortDirection::Asc,
        Some(direction) => direction.parse().map_err(|_| invalid())?,
    };
    Ok(Sort { field, direction })
}

/// A `createdAt` bound: an RFC 3339 timestamp, or a `YYYY-MM-DD` date meaning the start
/// (`gte`) or the end (`lte`) of that UTC day.
fn parse_bound(
    name: &str,
    value: &str,
    end_of_day: bool,
) -> Result<DateTime<Utc>, ValidationError> {
    let invalid = || {
        ValidationError::invalid_query(name, "must be an RFC 3339 timestamp or a date YYYY-MM-DD")
    };
    let value = value.trim();
    if let Ok(date) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        let start = date.and_hms_opt(0, 0, 0).ok_or_else(invalid)?.and_utc();
        return Ok(if end_of_day {
            start + Duration::days(1) - Duration::milliseconds(1)
        } else {
            start
        });
    }
    DateTime::parse_from_rfc3339(&restore_plus_offset(value))
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| invalid())
}

/// An unencoded `+01:00` offset arrives as ` 01:00` after form decoding; put the `+` back.
fn restore_plus_offset(value: &str) -> std::borrow::Cow<'_, str> {
    let bytes = value.as_bytes();
    let n = bytes.len();
    if n > 6 && bytes[n - 6] == b' ' && bytes[n - 3] == b':' {
        std::borrow::Cow::Owned(format!("{}+{}", &value[..n - 6], &value[n - 5..]))
    } else {
        std::borrow::Cow::Borrowed(value)
    }
}

/// Parses getLead's identifier: the first of `leadId`, `uniqueIdentifier`, `email`, `phone`
/// present (non-empty); the rest are ignored.
pub fn lead_identifier_from_pairs<K: AsRef<str>, V: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Result<LeadIdentifier, ValidationError> {
    let params = Params::new(pairs);
    // A blank `leadId` counts as absent; any other value must be digits only, as in
    // updateLeadStatus's body (` 1` is not a lead id).
    if params.filter("leadId", true).is_some() {
        let id = params.raw("leadId").unwrap_or_default();
        return fields::parse_positive_digits(id)
            .map(|id| LeadIdentifier::LeadId(LeadId(id)))
            .ok_or_else(|| ValidationError::invalid_query("leadId", "must be a positive integer"));
    }
    if let Some(id) = params.filter("uniqueIdentifier", true) {
        return Ok(LeadIdentifier::UniqueIdentifier(id));
    }
    if let Some(email) = params.filter("email", true) {
        return Ok(LeadIdentifier::Email(email));
    }
    if let Some(phone) = params.filter("phone", true) {
        return Ok(LeadIdentifier::Phone(phone));
    }
    Err(ValidationError::missing_identifier())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use chrono::TimeZone;

    fn query(pairs: &[(&str, &str)]) -> Result<LeadQuery, ValidationError> {
        LeadQuery::from_pairs(pairs.iter().copied())
    }

    fn invalid(pairs: &[(&str, &str)]) -> String {
        let err = query(pairs).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidQuery);
        err.errors[0].field.clone()
    }

    /// A query lists the statuses it names, or every one but spam when it names none.
    #[test]
    fn a_query_lists_its_statuses_or_all_but_spam() {
        let listed = |q: &LeadQuery| -> Vec<LeadStatus> {
            LeadStatus::VARIANTS
                .iter()
                .copied()
                .filter(|status| q.lists(*status))
                .collect()
        };
        let unnamed = query(&[]).unwrap();
        let all_but_spam: Vec<_> = LeadStatus::VARIANTS
            .iter()
            .copied()
            .filter(|status| *status != LeadStatus::Spam)
            .collect();
        assert_eq!(listed(&unnamed), all_but_spam);
        let named = query(&[("status", "spam,lost")]).unwrap();
        assert_eq!(listed(&named), vec![LeadStatus::Lost, LeadStatus::Spam]);
        assert_eq!(listed(&unnamed.any_status()), LeadStatus::VARIANTS.to_vec());
    }

    #[test]
    fn defaults() {
        let q = query(&[]).unwrap();
        assert_eq!(q, LeadQuery::default());
        assert_eq!((q.limit, q.page), (50, 1));
        assert_eq!(
            q.sort,
            Sort {
                field: SortField::CreatedAt,
                direction: SortDirection::Desc
            }
        );
        assert_eq!(q.offset(), 0);
    }

    #[test]
    fn limit_and_page_bounds() {
        assert_eq!(query(&[("limit", "1")]).unwrap().limit, 1);
        assert_eq!(query(&[("limit", "100")]).unwrap().limit, 100);
        for bad in ["0", "101", "-1", "abc", "", "1.5", "+5", " 5"] {
            assert_eq!(invalid(&[("limit", bad)]), "limit", "{bad:?}");
        }
        let q = query(&[("page", "3"), ("limit", "20")]).unwrap();
        assert_eq!(q.offset(), 40);
        for bad in ["0", "-1", "x", "", "99999999999"] {
            assert_eq!(invalid(&[("page", bad)]), "page", "{bad:?}");
        }
        let err = query(&[("limit", "0")]).unwrap_err();
        assert_eq!(
            err.message,
            "Invalid query parameter: limit must be an integer from 1 to 100"
        );
    }

    #[test]
    fn status_lists() {
        let q = query(&[("status", " open, ,pending,")]).unwrap();
        assert_eq!(q.status, Some(vec![LeadStatus::Open, LeadStatus::Pending]));
        assert_eq!(query(&[("status", " , ")]).unwrap().status, None);
        assert_eq!(
            query(&[("status", "unknown")]).unwrap().status,
            Some(vec![])
        );
    }

    #[test]
    fn filters_with_empty_values_are_absent() {
        let q = query(&[("formName", ""), ("email", "  "), ("uniqueIdentifier", "")]).unwrap();
        assert_eq!(
            (q.form_name, q.email, q.unique_identifier),
            (None, None, None)
        );
        let q = query(&[
            ("formName", "Contact Us"),
            ("email", " A@x.io "),
            ("phone", "+1 555"),
        ])
        .unwrap();
        assert_eq!(q.form_name.as_deref(), Some("Contact Us"));
        assert_eq!(q.email.as_deref(), Some("A@x.io"));
        assert_eq!(q.phone.as_deref(), Some("+1 555"));
    }

    #[test]
    fn created_at_bounds() {
        let q = query(&[
            ("createdAt[gte]", "2026-03-15"),
            ("createdAt[lte]", "2026-03-15"),
        ])
        .unwrap();
        assert_eq!(
            q.created_from,
            Some(Utc.with_ymd_and_hms(2026, 3, 15, 0, 0, 0).unwrap())
        );
        assert_eq!(
            crate::time::format(&q.created_to.unwrap()),
            "2026-03-15T23:59:59.999Z"
        );
        let q = query(&[("createdAt[gte]", "2026-03-15T10:30:00+01:00")]).unwrap();
        assert_eq!(
            q.created_from,
            Some(Utc.with_ymd_and_hms(2026, 3, 15, 9, 30, 0).unwrap())
        );
        // `+` decoded to a space by a client that did not encode it.
        let q = query(&[("createdAt[lte]", "2026-03-15T10:30:00 01:00")]).unwrap();
        assert_eq!(
            q.created_to,
            Some(Utc.with_ymd_and_hms(2026, 3, 15, 9, 30, 0).unwrap())
        );
        let q = query(&[("createdAt[gte]", "2026-03-15T10:30:00.250Z")]).unwrap();
        assert_eq!(
            crate::time::format(&q.created_from.unwrap()),
            "2026-03-15T10:30:00.250Z"
        );
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-03-15T10:30",
            "",
            "15.03.2026",
        ] {
            assert_eq!(
                invalid(&[("createdAt[gte]", bad)]),
                "createdAt[gte]",
                "{bad:?}"
            );
            assert_eq!(
                invalid(&[("createdAt[lte]", bad)]),
                "createdAt[lte]",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn search_needs_two_characters() {
        assert_eq!(
            query(&[("search", " ad ")]).unwrap().search.as_deref(),
            Some("ad")
        );
        assert_eq!(
            query(&[("search", "éé")]).unwrap().search.as_deref(),
            Some("éé")
        );
        for bad in ["a", " a ", ""] {
            assert_eq!(invalid(&[("search", bad)]), "search");
        }
    }

    #[test]
    fn sort_field_and_direction() {
        for &field in SortField::VARIANTS {
            for (suffix, direction) in [
                ("", SortDirection::Asc),
                (":asc", SortDirection::Asc),
                (":desc", SortDirection::Desc),
            ] {
                let value = format!("{}{suffix}", field.as_ref());
                assert_eq!(
                    query(&[("sort", &value)]).unwrap().sort,
                    Sort { field, direction }
                );
            }
        }
        for bad in [
            "",
            "id",
            "createdAt:",
            "createdAt:up",
            "createdat:asc",
            "price:ASC",
            "price:asc:x",
        ] {
            assert_eq!(invalid(&[("sort", bad)]), "sort", "{bad:?}");
        }
    }

    #[test]
    fn exists_flags() {
        let q = query(&[
            ("gclid[exists]", "true"),
            ("cid[exists]", "0"),
            ("fbp[exists]", "1"),
            ("fbc[exists]", "false"),
        ])
        .unwrap();
        assert_eq!(
            (q.gclid_exists, q.cid_exists, q.fbp_exists, q.fbc_exists),
            (Some(true), Some(false), Some(true), Some(false))
        );
        for name in EXISTS_PARAMS {
            for bad in ["yes", "TRUE", "", "2"] {
                assert_eq!(invalid(&[(name, bad)]), name);
            }
        }
    }

    #[test]
    fn unknown_parameters_are_ignored_and_the_first_occurrence_counts() {
        let q = query(&[("foo", "bar"), ("limit", "5"), ("limit", "500")]).unwrap();
        assert_eq!(q.limit, 5);
    }

    #[test]
    fn q_is_words_folded_of_at_least_two_characters() {
        assert_eq!(
            query(&[("q", " Jonas  MÜLLER ")]).unwrap().q,
            ["jonas", "muller"]
        );
        for bad in ["", " a ", "\t"] {
            assert_eq!(invalid(&[("q", bad)]), "q", "{bad:?}");
        }
    }

    #[test]
    fn pairs_round_trip() {
        let q = LeadQuery {
            limit: 10,
            page: 2,
            status: Some(vec![LeadStatus::Open, LeadStatus::Lost]),
            form_name: Some("Contact".into()),
            form: Some("contact us".into()),
            source: Some("google".into()),
            medium: Some("cpc".into()),
            campaign: Some("spring".into()),
            conversion: Some(ConversionId::Lost),
            unique_identifier: Some("crm-1".into()),
            email: Some("a@x.io".into()),
            phone: Some("+1 555".into()),
            created_from: Some(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()),
            created_to: Some(Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap()),
            search: Some("ada".into()),
            q: vec!["jonas".into(), "muller".into()],
            sort: Sort {
                field: SortField::Price,
                direction: SortDirection::Asc,
            },
            gclid_exists: Some(true),
            cid_exists: Some(false),
            fbp_exists: None,
            fbc_exists: Some(true),
            msclkid_exists: Some(true),
            li_fat_id_exists: Some(false),
            gbraid_exists: Some(true),
            ttclid_exists: Some(false),
            rdt_cid_exists: Some(true),
            sccid_exists: None,
            epik_exists: Some(false),
            twclid_exists: Some(true),
            duplicates: None,
            assignee: None,
        };
        assert_eq!(LeadQuery::from_pairs(q.to_pairs()).unwrap(), q);
        assert_eq!(
            LeadQuery::from_pairs(LeadQuery::default().to_pairs()).unwrap(),
            LeadQuery::default()
        );
        let nothing = LeadQuery {
            status: Some(vec![]),
            ..LeadQuery::default()
        };
        assert_eq!(LeadQuery::from_pairs(nothing.to_pairs()).unwrap(), nothing);
    }

    #[test]
    fn unfiltered_queries_only_sort_and_page() {
        assert!(
            query(&[("limit", "5"), ("page", "2"), ("sort", "price:asc")])
                .unwrap()
                .is_unfiltered()
        );
        for filter in [
            ("status", "open"),
            ("search", "ab"),
            ("gclid[exists]", "false"),
            ("createdAt[gte]", "2026-01-01"),
        ] {
            assert!(!query(&[filter]).unwrap().is_unfiltered(), "{filter:?}");
        }
    }

    #[test]
    fn facets_are_the_form_touch_rating_and_click_filters() {
        let q = query(&[
            ("form", "Contact US"),
            ("source", "google"),
            ("conversionId", "lost"),
            ("gclid[exists]", "0"),
        ])
        .unwrap();
        assert_eq!(q.form.as_deref(), Some("contact us"));
        assert_eq!(
            q.facets(),
            [
                Facet::text("form_key", "contact us".into()),
                Facet::text("first_source", "google".into()),
                Facet::text("conversion_id", "lost".into()),
                Facet {
                    column: "has_gclid",
                    value: FacetValue::Flag(false)
                },
            ]
        );
        assert_eq!(q.only_facet(), None, "four facets are no one facet");
        assert_eq!(q.facet_filters(), q.facets(), "no form name, no key added");
        let named = query(&[("formName", "Contact Us")]).unwrap();
        assert_eq!(
            named.facet_filters(),
            [
                Facet::text("form_key", "contact us".into()),
                Facet::text("form_name", "Contact Us".into()),
            ]
        );
        assert_eq!(
            named.facets(),
            [Facet::text("form_name", "Contact Us".into())]
        );
        let label = "7f0c1f7e-58a4-4c4e-9b55-0f8a64e4c0de";
        let q = query(&[("conversionId", label), ("status", "rated")]).unwrap();
        assert_eq!(
            q.only_facet(),
            Some(Facet::text("conversion_id", label.into()))
        );
        assert!(!q.is_unfiltered());
        let q = query(&[("campaign", "spring"), ("q", "ada")]).unwrap();
        assert_eq!(q.only_facet(), None, "a search counts by scanning");
        for bad in [
            "open",
            "won",
            " lost",
            "7f0c1f7e",
            "7f0c1f7e58a44c4e9b550f8a64e4c0de",
            "{7f0c1f7e-58a4-4c4e-9b55-0f8a64e4c0de}",
        ] {
            assert_eq!(invalid(&[("conversionId", bad)]), "conversionId", "{bad:?}");
        }
    }

    #[test]
    fn get_lead_identifier_priority() {
        let id = lead_identifier_from_pairs([("phone", "1"), ("email", "a@x.io"), ("leadId", "7")])
            .unwrap();
        assert_eq!(id, LeadIdentifier::LeadId(LeadId(7)));
        let id = lead_identifier_from_pairs([("phone", "1"), ("email", "a@x.io")]).unwrap();
        assert_eq!(id, LeadIdentifier::Email("a@x.io".into()));
        let id = lead_identifier_from_pairs([("phone", "1"), ("uniqueIdentifier", "u")]).unwrap();
        assert_eq!(id, LeadIdentifier::UniqueIdentifier("u".into()));
        let id = lead_identifier_from_pairs([("leadId", ""), ("phone", "+1 555")]).unwrap();
        assert_eq!(id, LeadIdentifier::Phone("+1 555".into()));
        let err = lead_identifier_from_pairs(Vec::<(String, String)>::new()).unwrap_err();
        assert_eq!(err.code, ErrorCode::MissingIdentifier);
        for bad in ["0", "-5", "abc", "1.0", " 1", "1 ", "+1"] {
            let err =
                lead_identifier_from_pairs([("leadId", bad), ("email", "a@x.io")]).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidQuery);
            assert_eq!(
                err.message,
                "Invalid query parameter: leadId must be a positive integer"
            );
        }
    }
}
