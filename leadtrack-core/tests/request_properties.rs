//! Property tests of the request parsers: no input makes them panic, and what the typed
//! client writes parses back to what it meant.

use chrono::{DateTime, TimeZone, Utc};
use leadtrack_core::api::UpdateLeadStatusRequest;
use leadtrack_core::request::query::{Sort, SortDirection, SortField, lead_identifier_from_pairs};
use leadtrack_core::request::{CreateRoute, LeadQuery, NewLead, StatusUpdate};
use leadtrack_core::types::{ConversionId, LeadId, LeadIdentifier, LeadStatus};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::{Map, Value, json};
use strum::VariantArray;
use uuid::Uuid;

/// Enough cases to find the odd input, few enough that `cargo test` stays quick, from a
/// fixed seed so CI is repeatable. `PROPTEST_CASES` and `PROPTEST_RNG_SEED` override both
/// (say, `PROPTEST_CASES=100000` with a random seed to hunt for more).
fn config() -> ProptestConfig {
    let mut config = ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 256;
    }
    if matches!(config.rng_seed, RngSeed::Random) {
        config.rng_seed = RngSeed::Fixed(0x1ead_7ac5);
    }
    config
}

/// The property names the parsers look at, and a few they do not.
const BODY_NAMES: &[&str] = &[
    "projectId",
    "userData",
    "attributionData",
    "formData",
    "deviceData",
    "channelFlow",
    "lt_channelflow",
    "uniqueIdentifier",
    "unique_identifier",
    "leadId",
    "email",
    "phone",
    "conversionId",
    "price",
    "note",
    "firstName",
    "company",
    "companyName",
    "gclid",
    "formName",
    "uniqueEventId",
    "ipAddress",
    "userAgent",
    "other",
];

/// The query parameters the parsers look at, and a few they do not.
const QUERY_NAMES: &[&str] = &[
    "limit",
    "page",
    "status",
    "formName",
    "uniqueIdentifier",
    "email",
    "phone",
    "createdAt[gte]",
    "createdAt[lte]",
    "search",
    "sort",
    "gclid[exists]",
    "cid[exists]",
    "fbp[exists]",
    "fbc[exists]",
    "leadId",
    "other",
];

fn name(names: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(names).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

/// Any JSON value, nested a few levels, with the parsers' property names as keys.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        Just(json!("open")),
        Just(json!("  ")),
        Just(json!([])),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            json_object(inner).prop_map(Value::Object),
        ]
    })
}

fn json_object(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::vec((name(BODY_NAMES), values), 0..6)
        .prop_map(|entries| entries.into_iter().collect())
}

fn query_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9]{0,21}",
        Just("true".to_owned()),
        Just("0".to_owned()),
        Just("open, lost,,rated".to_owned()),
        Just("price:desc".to_owned()),
        Just("2026-03-15".to_owned()),
        Just("2026-03-15T10:30:00.000Z".to_owned()),
        Just("2026-03-15T10:30:00 01:00".to_owned()),
    ]
}

fn query_pairs() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec((name(QUERY_NAMES), query_value()), 0..8)
}

/// A non-empty string with no whitespace at either end: what the parsers keep as given.
fn trimmed() -> impl Strategy<Value = String> {
    "\\S(.{0,20}\\S)?".prop_filter("trimmed", |s| s.trim() == s)
}

fn lead_identifier() -> impl Strategy<Value = LeadIdentifier> {
    prop_oneof![
        (1..=i64::MAX).prop_map(|id| LeadIdentifier::LeadId(LeadId(id))),
        trimmed().prop_map(LeadIdentifier::UniqueIdentifier),
        trimmed().prop_map(LeadIdentifier::Email),
        trimmed().prop_map(LeadIdentifier::Phone),
    ]
}

fn conversion_id() -> impl Strategy<Value = ConversionId> {
    prop_oneof![
        Just(ConversionId::Open),
        Just(ConversionId::Lost),
        any::<u128>().prop_map(|n| ConversionId::Label(Uuid::from_u128(n))),
    ]
}

/// A time as the API writes it: milliseconds, years 0 to 9999.
fn timestamp() -> impl Strategy<Value = DateTime<Utc>> {
    (0..=253_402_300_799_999_i64).prop_map(|ms| Utc.timestamp_millis_opt(ms).unwrap())
}

fn lead_query() -> impl Strategy<Value = LeadQuery> {
    let statuses = proptest::collection::vec(proptest::sample::select(LeadStatus::VARIANTS), 0..5)
        .prop_map(|mut statuses| {
            statuses.dedup();
            statuses
        });
    let sort = (
        proptest::sample::select(SortField::VARIANTS),
        prop_oneof![Just(SortDirection::Asc), Just(SortDirection::Desc)],
    )
        .prop_map(|(field, direction)| Sort { field, direction });
    let filters = (
        proptest::option::of(statuses),
        proptest::option::of(any::<String>().prop_filter("non-empty", |s| !s.is_empty())),
        proptest::option::of(any::<String>().prop_filter("non-empty", |s| !s.is_empty())),
        proptest::option::of(trimmed()),
        proptest::option::of(trimmed()),
        proptest::option::of(timestamp()),
        proptest::option::of(timestamp()),
        proptest::option::of("\\S.{0,20}\\S".prop_filter("trimmed", |s| s.trim() == s)),
    );
    let flags = proptest::array::uniform12(proptest::option::of(any::<bool>()));
    (1..=100_u32, 1..=u32::MAX, filters, sort, flags).prop_map(
        |(limit, page, filters, sort, flags)| {
            let (status, form_name, unique_identifier, email, phone, from, to, search) = filters;
            let query = LeadQuery {
                limit,
                page,
                status,
                form_name,
                unique_identifier,
                email,
                phone,
                created_from: from,
                created_to: to,
                search,
                sort,
                ..LeadQuery::default()
            };
            query.with_presence_filters(flags)
        },
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = NewLead::parse(&body, CreateRoute::Browser);
        let _ = NewLead::parse(&body, CreateRoute::Server);
        let _ = StatusUpdate::parse(&body);
    }

    #[test]
    fn arbitrary_json_bodies_never_panic(body in json_object(json_value())) {
        let text = serde_json::to_vec(&body).unwrap();
        // Read back, not `body` itself: serde_json may read a float's last digit apart
        // from how it wrote it, which is no concern of the parsers.
        let body: Map<String, Value> = serde_json::from_slice(&text).unwrap();
        for route in [CreateRoute::Browser, CreateRoute::Server] {
            let parsed = NewLead::parse(&text, route);
            prop_assert_eq!(&parsed, &NewLead::from_object(body.clone(), route));
        }
        let parsed = StatusUpdate::parse(&text);
        prop_assert_eq!(parsed, StatusUpdate::from_object(body));
    }

    #[test]
    fn arbitrary_query_pairs_never_panic_and_reparse_to_themselves(pairs in query_pairs()) {
        if let Ok(query) = LeadQuery::from_pairs(pairs.iter().map(|(k, v)| (k, v))) {
            prop_assert_eq!(LeadQuery::from_pairs(query.to_pairs()), Ok(query));
        }
        if let Ok(id) = lead_identifier_from_pairs(pairs) {
            let again = lead_identifier_from_pairs([(id.name(), id.value())]);
            prop_assert_eq!(again, Ok(id));
        }
    }

    #[test]
    fn lead_queries_round_trip_through_pairs(query in lead_query()) {
        prop_assert_eq!(LeadQuery::from_pairs(query.to_pairs()), Ok(query));
    }

    #[test]
    fn lead_identifiers_round_trip_through_pairs(id in lead_identifier()) {
        prop_assert_eq!(lead_identifier_from_pairs([(id.name(), id.value())]), Ok(id));
    }

    #[test]
    fn status_requests_round_trip_through_serde(
        identifier in lead_identifier(),
        conversion_id in conversion_id(),
        price in proptest::option::of(0..=i64::MAX),
        note in proptest::option::of(trimmed()),
    ) {
        let request = UpdateLeadStatusRequest { identifier, conversion_id, price, note };
        let body = serde_json::to_vec(&request).unwrap();
        let update = StatusUpdate::parse(&body).unwrap();
        prop_assert_eq!(update.identifier, request.identifier);
        prop_assert_eq!(update.conversion_id, request.conversion_id);
        prop_assert_eq!(update.price, request.price);
        prop_assert_eq!(update.note, request.note.map(Some));
    }

    #[test]
    fn created_leads_keep_trimmed_values(
        project in trimmed(),
        email in trimmed(),
        gclid in proptest::option::of(trimmed()),
        unique_identifier in proptest::option::of("\\S{1,255}"),
        padding in "[ \t]{0,3}",
    ) {
        let mut body = json!({
            "projectId": format!("{padding}{project}{padding}"),
            "userData": {"email": format!("{padding}{email}"), "extra": 1},
            "attributionData": {"gclid": gclid, "utm_source": ""},
        });
        if let Some(id) = &unique_identifier {
            body["unique_identifier"] = json!(id);
        }
        let lead = NewLead::parse(body.to_string().as_bytes(), CreateRoute::Browser).unwrap();
        prop_assert_eq!(lead.project_id, Some(project));
        prop_assert_eq!(&lead.data.user_data["email"], &json!(email));
        prop_assert_eq!(&lead.data.user_data["extra"], &json!(1));
        prop_assert_eq!(
            lead.data.attribution_data.get("gclid").cloned(),
            gclid.map(Value::String)
        );
        prop_assert!(!lead.data.attribution_data.contains_key("utm_source"));
        prop_assert_eq!(lead.data.unique_identifier, unique_identifier);
    }
}
