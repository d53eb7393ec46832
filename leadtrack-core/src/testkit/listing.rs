//! Listing leads: every filter, the sort orders and pages.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::{Backend, at, attributed, by, create, ids, label, project, update};
use crate::api::GetLeadsResponse;
use crate::label::LabelMapping;
use crate::project::Project;
use crate::request::query::{Sort, SortDirection, SortField};
use crate::request::{LeadQuery, StatusUpdate};
use crate::store::{LeadStore, Listed};
use crate::types::{ConversionId, LeadStatus};
use crate::types::{LeadId, ProjectId};
use strum::VariantArray;

/// Three leads of project `p1`, each with different data, the second rated with a label
/// and the third lost: what every filter check lists.
struct Three<S> {
    store: S,
    project: crate::types::ProjectId,
    a: LeadId,
    b: LeadId,
    c: LeadId,
}

impl<S: LeadStore> Three<S> {
    /// The ids `query` lists, in id order.
    async fn list(&self, query: LeadQuery) -> Vec<LeadId> {
        let page = self.store.list_leads(self.project, &query).await.unwrap();
        let mut found = ids(&page.leads);
        found.sort_unstable();
        found
    }
}

async fn three<S: crate::store::Store>(store: S) -> Three<S> {
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let a = create(&store, &project, json!({
        "userData": {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "phone": "+44 20 1111"},
        "attributionData": {"gclid": "G", "cid": "1.2", "msclkid": "M"},
        "formData": {"formName": "Contact"}, "uniqueIdentifier": "crm-a"
    }), 0).await.lead_id;
    let b = create(&store, &project, json!({
        "userData": {"firstName": "Grace", "lastName": "Hopper", "email": "grace@navy.mil", "companyName": "Navy Labs"},
        "attributionData": {"fbp": "fb.1.1.1", "fbc": "fb.1.1.abc", "li_fat_id": "L"},
        "formData": {"formName": "contact"}, "uniqueIdentifier": "crm-b"
    }), 60).await.lead_id;
    let c = create(&store, &project, json!({
        "userData": {"firstName": "Édith", "email": "edith@example.org", "phone": "(555) 222-3333"},
        "attributionData": {"gclid": " ", "msclkid": " ", "utm_source": "news"},
        "formData": {"formName": "Quote"}
    }), 24 * 60).await.lead_id;
    store
        .update_status(
            project.id,
            &update(b, ConversionId::Label(label_id)),
            &by(),
            at(2),
        )
        .await
        .unwrap();
    store
        .update_status(project.id, &update(c, ConversionId::Lost), &by(), at(2))
        .await
        .unwrap();

    Three {
        project: project.id,
        store,
        a,
        b,
        c,
    }
}

/// getLeads by status, form, identifier, email and phone.
pub async fn listing_filters_by_status_form_and_contact<B: Backend>(backend: &B) {
    let f = three(backend.open().await).await;
    assert_eq!(f.list(LeadQuery::default()).await, [f.a, f.b, f.c]);
    assert_eq!(
        f.list(LeadQuery {
            status: Some(vec![LeadStatus::Pending]),
            ..LeadQuery::default()
        })
        .await,
        [f.b, f.c]
    );
    assert_eq!(
        f.list(LeadQuery {
            status: Some(vec![LeadStatus::Open, LeadStatus::Rated]),
            ..LeadQuery::default()
        })
        .await,
        [f.a]
    );
    assert_eq!(
        f.list(LeadQuery {
            status: Some(vec![]),
            ..LeadQuery::default()
        })
        .await,
        Vec::<LeadId>::new()
    );
    assert_eq!(
        f.list(LeadQuery {
            form_name: Some("Contact".into()),
            ..LeadQuery::default()
        })
        .await,
        [f.a],
        "case-sensitive"
    );
    assert_eq!(
        f.list(LeadQuery {
            unique_identifier: Some("crm-b".into()),
            ..LeadQuery::default()
        })
        .await,
        [f.b]
    );
    assert_eq!(
        f.list(LeadQuery {
            email: Some(" ADA@example.com".into()),
            ..LeadQuery::default()
        })
        .await,
        [f.a]
    );
    assert_eq!(
        f.list(LeadQuery {
            phone: Some("5552223333".into()),
            ..LeadQuery::default()
        })
        .await,
        [f.c]
    );
    assert_eq!(
        f.list(LeadQuery {
            phone: Some("-".into()),
            ..LeadQuery::default()
        })
        .await,
        Vec::<LeadId>::new()
    );
}

/// getLeads by creation time, both ends inclusive.
pub async fn listing_filters_by_creation_time<B: Backend>(backend: &B) {
    let f = three(backend.open().await).await;
    assert_eq!(
        f.list(LeadQuery {
            created_from: Some(at(60)),
            ..LeadQuery::default()
        })
        .await,
        [f.b, f.c],
        "inclusive"
    );
    assert_eq!(
        f.list(LeadQuery {
            created_to: Some(at(60)),
            ..LeadQuery::default()
        })
        .await,
        [f.a, f.b],
        "inclusive"
    );
    assert_eq!(
        f.list(LeadQuery {
            created_from: Some(at(1)),
            created_to: Some(at(24 * 60 - 1)),
            ..LeadQuery::default()
        })
        .await,
        [f.b]
    );
}

/// getLeads' search: names, email, company, phone, unicode; never a pattern.
pub async fn listing_search_matches_text_and_never_a_pattern<B: Backend>(backend: &B) {
    let f = three(backend.open().await).await;
    let searches: [(&str, Vec<LeadId>, &str); 8] = [
        ("LOVE", vec![f.a], "last name"),
        ("navy", vec![f.b], "email and company"),
        ("labs", vec![f.b], "company"),
        ("éd", vec![f.c], "unicode"),
        ("222-33", vec![f.c], "phone"),
        ("example", vec![f.a, f.c], ""),
        ("ada lovelace", vec![], ""),
        ("%", vec![], ""),
    ];
    for (term, expected, why) in searches {
        assert_eq!(
            f.list(LeadQuery {
                search: Some(term.into()),
                ..LeadQuery::default()
            })
            .await,
            expected,
            "search {term:?} {why}"
        );
    }
    for term in ["a\0b", "love\0", "\0\0\0"] {
        assert_eq!(
            f.list(LeadQuery {
                search: Some(term.into()),
                ..LeadQuery::default()
            })
            .await,
            Vec::<LeadId>::new(),
            "a NUL byte is only a character to look for: {term:?}"
        );
    }
}

/// getLeads by each click id's presence (blank is no value), combined with AND.
pub async fn listing_filters_by_click_ids<B: Backend>(backend: &B) {
    let f = three(backend.open().await).await;
    let exists = |set: fn(&mut LeadQuery, Option<bool>), present: bool| {
        let mut query = LeadQuery::default();
        set(&mut query, Some(present));
        query
    };
    let checks: [(LeadQuery, Vec<LeadId>, &str); 7] = [
        (
            exists(|q, v| q.gclid_exists = v, true),
            vec![f.a],
            "blank is not a value",
        ),
        (
            exists(|q, v| q.gclid_exists = v, false),
            vec![f.b, f.c],
            "gclid",
        ),
        (exists(|q, v| q.cid_exists = v, true), vec![f.a], "cid"),
        (exists(|q, v| q.fbp_exists = v, true), vec![f.b], "fbp"),
        (
            exists(|q, v| q.fbc_exists = v, false),
            vec![f.a, f.c],
            "fbc",
        ),
        (
            exists(|q, v| q.msclkid_exists = v, true),
            vec![f.a],
            "msclkid",
        ),
        (
            exists(|q, v| q.li_fat_id_exists = v, false),
            vec![f.a, f.c],
            "li_fat_id",
        ),
    ];
    for (query, expected, what) in checks {
        assert_eq!(f.list(query).await, expected, "{what}");
    }
    let combined = LeadQuery {
        search: Some("example".into()),
        gclid_exists: Some(false),
        ..LeadQuery::default()
    };
    assert_eq!(f.list(combined).await, [f.c], "filters combine with AND");
}

/// Every sort field in both directions: nulls last either way, ties broken on the id in the
/// same direction.
pub async fn listing_sorts_with_nulls_last_and_id_ties<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    // Names differ in case only where that must not matter.
    let l1 = create(
        &store,
        &project,
        json!({"userData": {"firstName": "bob", "lastName": "Zed", "email": "b@x.io"}}),
        10,
    )
    .await
    .lead_id;
    let l2 = create(
        &store,
        &project,
        json!({"userData": {"firstName": "Alice", "email": "a@x.io"}}),
        30,
    )
    .await
    .lead_id;
    let l3 = create(
        &store,
        &project,
        json!({"attributionData": {"gclid": "G"}}),
        20,
    )
    .await
    .lead_id;
    let l4 = create(
        &store,
        &project,
        json!({"userData": {"firstName": "Carol", "lastName": "Adams"}}),
        20,
    )
    .await
    .lead_id;
    for (lead, price) in [(l1, 500), (l2, 100), (l4, 500)] {
        let priced = StatusUpdate {
            price: Some(price),
            ..update(lead, ConversionId::Open)
        };
        store
            .update_status(project.id, &priced, &by(), at(40))
            .await
            .unwrap();
    }
    store
        .update_status(
            project.id,
            &update(l2, ConversionId::Label(label_id)),
            &by(),
            at(41),
        )
        .await
        .unwrap();
    store
        .update_status(project.id, &update(l3, ConversionId::Lost), &by(), at(41))
        .await
        .unwrap();

    let sorted = |field: SortField, direction: SortDirection| {
        let store = store.clone();
        async move {
            let query = LeadQuery {
                sort: Sort { field, direction },
                ..LeadQuery::default()
            };
            ids(&store.list_leads(project.id, &query).await.unwrap().leads)
        }
    };
    use SortDirection::{Asc, Desc};
    assert_eq!(
        sorted(SortField::CreatedAt, Asc).await,
        [l1, l3, l4, l2],
        "ties: id ascending"
    );
    assert_eq!(
        sorted(SortField::CreatedAt, Desc).await,
        [l2, l4, l3, l1],
        "ties: id descending"
    );
    assert_eq!(sorted(SortField::FirstName, Asc).await, [l2, l1, l4, l3]);
    assert_eq!(sorted(SortField::FirstName, Desc).await, [l4, l1, l2, l3]);
    assert_eq!(sorted(SortField::LastName, Asc).await, [l4, l1, l2, l3]);
    assert_eq!(sorted(SortField::LastName, Desc).await, [l1, l4, l3, l2]);
    assert_eq!(sorted(SortField::Email, Asc).await, [l2, l1, l3, l4]);
    assert_eq!(sorted(SortField::Email, Desc).await, [l1, l2, l4, l3]);
    assert_eq!(sorted(SortField::Price, Asc).await, [l2, l1, l4, l3]);
    assert_eq!(sorted(SortField::Price, Desc).await, [l4, l1, l2, l3]);
    // Statuses: l1 open, l2 pending, l3 pending, l4 open.
    assert_eq!(sorted(SortField::Status, Asc).await, [l1, l4, l2, l3]);
    assert_eq!(sorted(SortField::Status, Desc).await, [l3, l2, l4, l1]);
    let default = ids(&store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap()
        .leads);
    assert_eq!(default, [l2, l4, l3, l1], "newest first by default");

    // Emails sort by their matching key, lowercased whatever the letter: "ÉMILE@x.io" and
    // "émile@x.io" are one address (the tie broken on the id), after "a…" and before "z…"
    // only by that key's bytes.
    let other = super::project(&store, "p2").await;
    let mut by_email = Vec::new();
    for email in ["émile@x.io", "zoe@x.io", "ÉMILE@x.io", "Adam@x.io"] {
        let lead = json!({"userData": {"email": email}});
        by_email.push(create(&store, &other, lead, 50).await.lead_id);
    }
    let [emile, zoe, emile_again, adam] = by_email[..] else {
        unreachable!("four leads")
    };
    for (direction, expected) in [
        (Asc, [adam, zoe, emile, emile_again]),
        (Desc, [emile_again, emile, zoe, adam]),
    ] {
        let query = LeadQuery {
            sort: Sort {
                field: SortField::Email,
                direction,
            },
            ..LeadQuery::default()
        };
        let listed = store.list_leads(other.id, &query).await.unwrap().leads;
        assert_eq!(ids(&listed), expected, "{direction:?}");
    }
}

/// Pages: an empty project, exact and partial last pages, a page past the end.
pub async fn listing_pages<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let empty = store
        .list_leads(project.id, &LeadQuery::default())
        .await
        .unwrap();
    assert_eq!((empty.total, empty.leads.len()), (0, 0));
    let response = GetLeadsResponse::new(&empty, 1, 50);
    assert_eq!((response.total_pages, response.has_more), (0, false));

    let mut created = Vec::new();
    for minute in 0..7 {
        created.push(
            create(
                &store,
                &project,
                json!({"userData": {"email": "a@x.io"}}),
                minute,
            )
            .await
            .lead_id,
        );
    }
    let page = |page: u32, limit: u32| {
        let store = store.clone();
        async move {
            let query = LeadQuery {
                page,
                limit,
                sort: Sort {
                    field: SortField::CreatedAt,
                    direction: SortDirection::Asc,
                },
                ..LeadQuery::default()
            };
            let result = store.list_leads(project.id, &query).await.unwrap();
            let response = GetLeadsResponse::new(&result, page, limit);
            (
                ids(&result.leads),
                result.total,
                response.total_pages,
                response.has_more,
            )
        }
    };
    assert_eq!(page(1, 3).await, (created[0..3].to_vec(), 7, 3, true));
    assert_eq!(page(3, 3).await, (created[6..7].to_vec(), 7, 3, false));
    assert_eq!(page(4, 3).await, (vec![], 7, 3, false));
    assert_eq!(page(u32::MAX, 100).await, (vec![], 7, 1, false));
    assert_eq!(page(1, 7).await, (created.clone(), 7, 1, false));
    assert_eq!(page(7, 1).await, (created[6..7].to_vec(), 7, 7, false));
}

/// Six leads of `p1` (and one of `p2`), and a label that marks leads as done.
struct Six<S> {
    store: S,
    project: crate::project::Project,
    leads: Vec<LeadId>,
    done: uuid::Uuid,
}

async fn six<S: crate::store::Store>(store: S) -> Six<S> {
    let other = project(&store, "p2").await;
    let project = project(&store, "p1").await;
    let done = label(&store, &project, true, LabelMapping::default()).await;
    let mut leads = Vec::new();
    for minute in 0..6 {
        leads.push(
            create(
                &store,
                &project,
                json!({"userData": {"email": "a@x.io"}}),
                minute,
            )
            .await
            .lead_id,
        );
    }
    create(&store, &other, json!({"userData": {"email": "b@x.io"}}), 0).await;
    Six {
        store,
        project,
        leads,
        done,
    }
}

impl<S: crate::store::Store> Six<S> {
    /// Rates the first lead with the label and the next two lost.
    async fn rate_three(&self) {
        let (store, project, leads, done) = (&self.store, &self.project, &self.leads, self.done);
        for (lead, conversion) in [
            (leads[0], ConversionId::Label(done)),
            (leads[1], ConversionId::Lost),
            (leads[2], ConversionId::Lost),
        ] {
            store
                .update_status(project.id, &update(lead, conversion), &by(), at(10))
                .await
                .unwrap();
        }
    }

    /// A worker ends the first job (rated) and the second (lost); the third is reset.
    async fn finish_two_and_reset_one(&self) {
        let (store, project, leads) = (&self.store, &self.project, &self.leads);
        for _ in 0..2 {
            let claimed = store
                .claim_job(at(11), chrono::Duration::minutes(5))
                .await
                .unwrap()
                .unwrap();
            store
                .finish_job(claimed.job.id, claimed.lease.token, at(11))
                .await
                .unwrap();
        }
        store
            .update_status(
                project.id,
                &update(leads[2], ConversionId::Open),
                &by(),
                at(12),
            )
            .await
            .unwrap();
    }
}

/// The total of a listing filtered by status alone (an inbox tab) follows every change of
/// status: new leads, ratings, a finished job, a reset, and another project's leads.
pub async fn status_totals_follow_every_change<B: Backend>(backend: &B) {
    let six = six(backend.open().await).await;
    let (store, project) = (six.store.clone(), six.project.clone());
    // The truth, counted lead by lead.
    let expected = |store: B::Store| async move {
        let all = store
            .list_leads(
                project.id,
                &LeadQuery {
                    limit: 100,
                    ..LeadQuery::default()
                },
            )
            .await
            .unwrap();
        let mut counts = [0u64; 4];
        for lead in all.leads {
            let slot = LeadStatus::VARIANTS
                .iter()
                .position(|s| *s == lead.status)
                .unwrap();
            counts[slot] += 1;
        }
        counts
    };
    let totals = |store: B::Store| async move {
        let mut counts = [0u64; 4];
        for (slot, status) in counts.iter_mut().zip(LeadStatus::VARIANTS) {
            let query = LeadQuery {
                status: Some(vec![*status]),
                limit: 1,
                ..LeadQuery::default()
            };
            *slot = store.list_leads(project.id, &query).await.unwrap().total;
        }
        let both = LeadQuery {
            status: Some(vec![LeadStatus::Open, LeadStatus::Lost, LeadStatus::Open]),
            limit: 1,
            ..LeadQuery::default()
        };
        let both = store.list_leads(project.id, &both).await.unwrap().total;
        assert_eq!(
            both,
            counts[0] + counts[3],
            "a status listed twice counts once"
        );
        counts
    };
    assert_eq!(totals(store.clone()).await, [6, 0, 0, 0]);
    six.rate_three().await;
    assert_eq!(totals(store.clone()).await, expected(store.clone()).await);
    assert_eq!(totals(store.clone()).await, [3, 3, 0, 0]);
    six.finish_two_and_reset_one().await;
    assert_eq!(totals(store.clone()).await, expected(store.clone()).await);
    assert_eq!(totals(store.clone()).await, [4, 0, 1, 1]);
}

/// A search's counts per status, and its totals by status, follow the ratings; with
/// another filter, the counts are of the leads it matches, whatever the status asked for.
pub async fn status_counts_follow_ratings_and_other_filters<B: Backend>(backend: &B) {
    let six = six(backend.open().await).await;
    six.rate_three().await;
    six.finish_two_and_reset_one().await;
    let (store, project) = (&six.store, &six.project);
    // A search's counts per status, and its totals by status, follow the ratings too (a
    // backend may keep the text it searches, and the status beside it, apart from the
    // lead).
    let searched = |status: Option<Vec<LeadStatus>>| LeadQuery {
        search: Some("a@x.io".into()),
        status,
        limit: 1,
        ..LeadQuery::default()
    };
    let counts = store
        .status_counts(project.id, &searched(None))
        .await
        .unwrap();
    assert_eq!(
        counts,
        [
            (LeadStatus::Open, 4),
            (LeadStatus::Pending, 0),
            (LeadStatus::Rated, 1),
            (LeadStatus::Lost, 1),
            (LeadStatus::Spam, 0)
        ]
    );
    for (status, count) in counts {
        let listed = store
            .list_leads(project.id, &searched(Some(vec![status])))
            .await
            .unwrap();
        assert_eq!(listed.total, count, "{status:?}");
    }

    // With another filter, the counts are of the leads it matches, whatever the status
    // asked for.
    store
        .create_lead(
            project.id,
            super::data(json!({"userData": {"email": "c@x.io"}})),
            at(20),
        )
        .await
        .unwrap();
    let filtered = LeadQuery {
        email: Some("C@x.io".into()),
        status: Some(vec![LeadStatus::Lost]),
        ..LeadQuery::default()
    };
    let counts = store.status_counts(project.id, &filtered).await.unwrap();
    assert_eq!(
        counts,
        [
            (LeadStatus::Open, 1),
            (LeadStatus::Pending, 0),
            (LeadStatus::Rated, 0),
            (LeadStatus::Lost, 0),
            (LeadStatus::Spam, 0)
        ]
    );
}

/// A search gives the same leads, total and pages however the backend finds them: alone
/// (which a backend may answer from its search index, or by walking the project's leads
/// for a common term) and with a filter every lead passes; for common, rare and
/// two-character terms, in both directions, on every page; another project's matches
/// never count.
pub async fn searches_agree_however_they_are_read<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let other = project(&store, "p2").await;
    let project = project(&store, "p1").await;
    for n in 0..120_i64 {
        // Half are Okafors, one in twelve has "zyx" in the company, all have "ex".
        let last = if n % 2 == 0 { "Okafor" } else { "Lovelace" };
        let company = if n % 12 == 5 { "Zyxel Labs" } else { "Acme" };
        let body = json!({"userData": {"lastName": last, "companyName": company,
                                       "email": format!("lead{n}@example.com")}});
        create(&store, &project, body.clone(), n).await;
        if n % 10 == 0 {
            create(&store, &other, body, n).await;
        }
    }
    for term in ["okafor", "OKAF", "zyx", "ex", "lead1", "nomatch"] {
        for direction in [SortDirection::Desc, SortDirection::Asc] {
            for (limit, page) in [(5, 1), (5, 2), (7, 9), (50, 2), (100, 1)] {
                let alone = LeadQuery {
                    search: Some(term.into()),
                    sort: Sort {
                        field: SortField::CreatedAt,
                        direction,
                    },
                    limit,
                    page,
                    ..LeadQuery::default()
                };
                let filtered = LeadQuery {
                    created_from: Some(at(-1)),
                    ..alone.clone()
                };
                let a = store.list_leads(project.id, &alone).await.unwrap();
                let b = store.list_leads(project.id, &filtered).await.unwrap();
                let context = format!("{term:?} {direction:?} limit {limit} page {page}");
                assert_eq!(a.total, b.total, "{context}");
                assert_eq!(ids(&a.leads), ids(&b.leads), "{context}");
            }
        }
    }
    let total = |term: &str| {
        let query = LeadQuery {
            search: Some(term.into()),
            ..LeadQuery::default()
        };
        let store = &store;
        let project = project.id;
        async move { store.list_leads(project, &query).await.unwrap().total }
    };
    assert_eq!(total("okafor").await, 60);
    assert_eq!(total("zyx").await, 10);
    assert_eq!(total("ex").await, 120);
    assert_eq!(
        total("lead1").await,
        31,
        "lead1, lead10 to lead19, lead100 to lead119"
    );
}

/// The values a filter offers: the project's form names and first touches, each once, in
/// order; another project's are not among them.
pub async fn listed_values_are_each_once_in_order<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    for (i, (form, source)) in [
        ("Quote", "google"),
        ("Contact", "bing"),
        ("Quote", "google"),
        ("Demo request", "newsletter"),
        ("Contact", "google"),
    ]
    .iter()
    .enumerate()
    {
        let body = json!({"userData": {"email": format!("p{i}@x.io")},
            "formData": {"formName": form},
            "attributionData": {"utm_source": source, "utm_campaign": format!("c{}", i % 2)}});
        create(&store, &acme, body, 0).await;
    }
    create(
        &store,
        &acme,
        json!({"userData": {"email": "none@x.io"}}),
        0,
    )
    .await;
    let body = json!({"userData": {"email": "o@x.io"}, "formData": {"formName": "Other form"},
        "attributionData": {"utm_source": "tiktok"}});
    create(&store, &other, body, 0).await;
    let listed = |listed: Listed| store.listed_values(acme.id, listed);
    assert_eq!(
        listed(Listed::FormName).await.unwrap(),
        ["Contact", "Demo request", "Quote"]
    );
    assert_eq!(
        listed(Listed::Source).await.unwrap(),
        ["bing", "google", "newsletter"]
    );
    assert_eq!(listed(Listed::Medium).await.unwrap(), ["(not set)"]);
    assert_eq!(listed(Listed::Campaign).await.unwrap(), ["c0", "c1"]);
    let nothing = store.listed_values(ProjectId(999), Listed::FormName).await;
    assert!(nothing.unwrap().is_empty());
}

/// The filters of every source: the form whatever its case, the first touch's source,
/// medium and campaign, the rating and each click id, alone and together.
pub async fn listing_filters_by_form_touch_rating_and_click_ids<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, true, LabelMapping::default()).await;
    let mut leads = Vec::new();
    for (minute, body) in [
        json!({"formData": {"formName": "Contact"}, "userData": {"email": "a@x.io"},
            "attributionData": {"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "spring", "gclid": "G", "gbraid": "Z9", "rdt_cid": "R1", "_epik": "P1"}}),
        json!({"formData": {"formName": "CONTACT"}, "userData": {"email": "b@x.io"},
            "attributionData": {"utm_source": "google", "utm_medium": "cpc", "utm_campaign": "autumn", "msclkid": "M", "ttclid": "T", "wbraid": " ", "ScCid": "S1", "epik": " "}}),
        json!({"formData": {"formName": "Quote"}, "userData": {"email": "c@x.io"},
            "attributionData": {"utm_source": "newsletter", "utm_medium": "email", "li_fat_id": "L", "fbclid": "IwAR", "wbraid": "WB", "twclid": "X1"}}),
    ]
    .into_iter()
    .enumerate()
    {
        let minute = i64::try_from(minute).unwrap();
        leads.push(create(&store, &project, body, minute).await.lead_id);
    }
    let [a, b, c] = leads[..] else { unreachable!() };
    let rate = |lead, conversion| update(lead, conversion);
    let label = ConversionId::Label(label_id);
    store
        .update_status(project.id, &rate(b, label), &by(), at(5))
        .await
        .unwrap();
    store
        .update_status(project.id, &rate(c, ConversionId::Lost), &by(), at(5))
        .await
        .unwrap();
    let three = Three {
        store,
        project: project.id,
        a,
        b,
        c,
    };
    let query = |pairs: &[(&str, &str)]| LeadQuery::from_pairs(pairs.iter().copied()).unwrap();
    let label_text = label_id.to_string();
    for (pairs, expected) in [
        (vec![("form", "contact")], vec![a, b]),
        (vec![("form", "CoNtAcT")], vec![a, b]),
        (vec![("formName", "CONTACT")], vec![b]),
        (vec![("source", "google")], vec![a, b]),
        (vec![("source", "Google")], vec![]),
        (vec![("medium", "email")], vec![c]),
        (vec![("campaign", "spring")], vec![a]),
        (vec![("conversionId", label_text.as_str())], vec![b]),
        (vec![("conversionId", "lost")], vec![c]),
        (vec![("gclid[exists]", "true")], vec![a]),
        (vec![("msclkid[exists]", "1")], vec![b]),
        (vec![("li_fat_id[exists]", "true")], vec![c]),
        (vec![("li_fat_id[exists]", "false")], vec![a, b]),
        // Meta's raw click id counts as its cookie.
        (vec![("fbc[exists]", "true")], vec![c]),
        (vec![("fbc[exists]", "false")], vec![a, b]),
        // Google's iOS click ids, either of them; a blank one is none.
        (vec![("gbraid[exists]", "true")], vec![a, c]),
        (vec![("gbraid[exists]", "false")], vec![b]),
        (vec![("ttclid[exists]", "true")], vec![b]),
        (vec![("ttclid[exists]", "0")], vec![a, c]),
        // Reddit's, Snapchat's and X's click ids; Pinterest's from the URL or its cookie.
        (vec![("rdt_cid[exists]", "true")], vec![a]),
        (vec![("ScCid[exists]", "true")], vec![b]),
        (vec![("epik[exists]", "true")], vec![a]),
        (vec![("epik[exists]", "false")], vec![b, c]),
        (vec![("twclid[exists]", "true")], vec![c]),
        (
            vec![("twclid[exists]", "false"), ("rdt_cid[exists]", "false")],
            vec![b],
        ),
        (vec![("source", "google"), ("campaign", "autumn")], vec![b]),
        (vec![("form", "contact"), ("status", "open")], vec![a]),
        (vec![("source", "google"), ("q", "b@x")], vec![b]),
        (vec![("source", "google"), ("q", "b x")], vec![b]),
        (vec![("form", "contact"), ("q", "au")], vec![b]),
        (vec![("status", "open"), ("q", "io")], vec![a]),
    ] {
        let found = three.list(query(&pairs)).await;
        assert_eq!(found, expected, "{pairs:?}");
        let page = three
            .store
            .list_leads(three.project, &query(&pairs))
            .await
            .unwrap();
        assert_eq!(page.total, expected.len() as u64, "total of {pairs:?}");
    }
}

/// The totals and tab counts of a listing filtered by one facet (read from kept counts)
/// equal a count of its matches after every change: creates, ratings, a merge that
/// changes the form and source, spam, a reset and a deletion.
pub async fn facet_counts_follow_every_change<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let label_id = label(&store, &project, false, LabelMapping::default()).await;
    let body = |form: &str, source: &str, event: &str| {
        json!({"formData": {"formName": form, "uniqueEventId": event},
            "userData": {"email": format!("{event}@x.io")},
            "attributionData": {"utm_source": source, "utm_medium": "cpc", "gclid": event}})
    };
    let check = || async {
        let queries: Vec<Vec<(&str, &str)>> = vec![
            vec![("form", "contact")],
            vec![("form", "quote")],
            vec![("formName", "Contact")],
            vec![("source", "google")],
            vec![("source", "bing")],
            vec![("medium", "cpc")],
            vec![("conversionId", "lost")],
            vec![("gclid[exists]", "true")],
            vec![("gclid[exists]", "false")],
            vec![("form", "contact"), ("status", "open,lost")],
        ];
        for pairs in queries {
            let kept = LeadQuery::from_pairs(pairs.iter().copied()).unwrap();
            assert!(kept.only_facet().is_some());
            // A bound every lead meets: the same leads, counted by a scan.
            let scanned = LeadQuery {
                created_from: Some(at(-1)),
                ..kept.clone()
            };
            let total = |query: LeadQuery| {
                let store = store.clone();
                async move { store.list_leads(project.id, &query).await.unwrap().total }
            };
            assert_eq!(
                total(kept.clone()).await,
                total(scanned.clone()).await,
                "{pairs:?}"
            );
            assert_eq!(
                store.status_counts(project.id, &kept).await.unwrap(),
                store.status_counts(project.id, &scanned).await.unwrap(),
                "tab counts of {pairs:?}"
            );
        }
    };
    let a = create(&store, &project, body("Contact", "google", "e1"), 0)
        .await
        .lead_id;
    let b = create(&store, &project, body("Quote", "google", "e2"), 1)
        .await
        .lead_id;
    let c = create(&store, &project, body("contact", "bing", "e3"), 2)
        .await
        .lead_id;
    check().await;
    let label = ConversionId::Label(label_id);
    store
        .update_status(project.id, &update(a, label), &by(), at(3))
        .await
        .unwrap();
    store
        .update_status(project.id, &update(b, ConversionId::Lost), &by(), at(3))
        .await
        .unwrap();
    check().await;
    // The same event again: the lead is merged, its form and source replaced.
    let merged = create(&store, &project, body("Quote", "bing", "e3"), 4).await;
    assert_eq!((merged.lead_id, merged.created), (c, false));
    check().await;
    store
        .mark_spam(project.id, &[c], &by(), at(5))
        .await
        .unwrap();
    store
        .update_status(project.id, &update(b, ConversionId::Open), &by(), at(6))
        .await
        .unwrap();
    check().await;
    store
        .delete_lead(project.id, b, &attributed(), at(7))
        .await
        .unwrap();
    check().await;
    let quotes = LeadQuery::from_pairs([("form", "quote")]).unwrap();
    let page = store.list_leads(project.id, &quotes).await.unwrap();
    assert_eq!(page.total, 0, "the merged lead is spam, the other deleted");
}

/// The totals and tab counts of a listing filtered by a range of creation times alone
/// (read from counts kept per hour, and the range's partial hours counted) equal the
/// leads of the range counted one by one, after creates, ratings, spam and a deletion;
/// for ranges of whole hours, of parts of hours, within one hour, and open at either end.
pub async fn date_range_counts_follow_every_change<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let project = project(&store, "p1").await;
    let mut leads = Vec::new();
    for minute in [-70, -1, 0, 1, 59, 60, 61, 119, 120, 185, 600] {
        let body = json!({"userData": {"email": format!("m{minute}@x.io")}});
        leads.push(create(&store, &project, body, minute).await.lead_id);
    }
    let ms = chrono::Duration::milliseconds;
    let ranges = [
        (Some(at(0)), Some(at(120))),
        (Some(at(0)), Some(at(120) - ms(1))),
        (Some(at(1)), Some(at(59))),
        (Some(at(0) + ms(1)), Some(at(185) - ms(1))),
        (Some(at(-70)), Some(at(-70))),
        (Some(at(61)), None),
        (None, Some(at(60))),
        (Some(at(601)), None),
    ];
    let check = || async {
        let every = LeadQuery {
            limit: 100,
            ..LeadQuery::default().any_status()
        };
        let all = store.list_leads(project.id, &every).await.unwrap().leads;
        for (from, to) in ranges {
            let dated = LeadQuery {
                created_from: from,
                created_to: to,
                ..LeadQuery::default()
            };
            assert!(dated.only_dates().is_some());
            let within: Vec<_> = all
                .iter()
                .filter(|lead| from.is_none_or(|from| lead.created_at >= from))
                .filter(|lead| to.is_none_or(|to| lead.created_at <= to))
                .collect();
            let counted = |status: LeadStatus| {
                within.iter().filter(|lead| lead.status == status).count() as u64
            };
            let tabs: Vec<_> = LeadStatus::VARIANTS
                .iter()
                .map(|status| (*status, counted(*status)))
                .collect();
            assert_eq!(
                store.status_counts(project.id, &dated).await.unwrap(),
                tabs,
                "tab counts of {from:?}..{to:?}"
            );
            let listed = LeadStatus::LISTED.iter().map(|s| counted(*s)).sum::<u64>();
            let page = store.list_leads(project.id, &dated).await.unwrap();
            assert_eq!(page.total, listed, "total of {from:?}..{to:?}");
            assert_eq!(page.leads.len() as u64, listed, "page of {from:?}..{to:?}");
            let lost = LeadQuery {
                status: Some(vec![LeadStatus::Lost]),
                ..dated
            };
            let page = store.list_leads(project.id, &lost).await.unwrap();
            assert_eq!(
                page.total,
                counted(LeadStatus::Lost),
                "lost of {from:?}..{to:?}"
            );
        }
    };
    check().await;
    for (lead, conversion) in [
        (leads[2], ConversionId::Lost),
        (leads[5], ConversionId::Lost),
    ] {
        store
            .update_status(project.id, &update(lead, conversion), &by(), at(700))
            .await
            .unwrap();
    }
    store
        .mark_spam(project.id, &[leads[3], leads[7]], &by(), at(701))
        .await
        .unwrap();
    check().await;
    store
        .update_status(
            project.id,
            &update(leads[5], ConversionId::Open),
            &by(),
            at(702),
        )
        .await
        .unwrap();
    store
        .delete_lead(project.id, leads[6], &attributed(), at(703))
        .await
        .unwrap();
    check().await;
}

/// `q` finds what people type: full names in either order, any case and accents, the CRM
/// id, campaigns, click ids, the form's message and phone numbers however written; every
/// word must match. `search` keeps its meaning (no folding).
pub async fn q_finds_names_accents_ids_campaigns_and_messages<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let acme = project(&store, "acme").await;
    let other = project(&store, "other").await;
    let mut leads = Vec::new();
    for (i, body) in [
        json!({"userData": {"firstName": "Jonas", "lastName": "Kaya", "email": "jk@x.io"}}),
        json!({"userData": {"firstName": "Anna", "lastName": "Müller", "email": "am@x.io"}}),
        json!({"userData": {"email": "bob@x.io"}, "uniqueIdentifier": "CRM-77"}),
        json!({"userData": {"email": "cy@x.io"}, "attributionData": {"utm_source": "google", "utm_campaign": "Spring_Sale"}}),
        json!({"userData": {"email": "dee@x.io"}, "attributionData": {"gclid": "Cj0-XYZ"}}),
        json!({"userData": {"email": "eve@x.io"}, "formData": {"message": "Call me about pricing"}}),
        json!({"userData": {"firstName": "Zoë", "phone": "+49 151 1234 5698"}}),
        json!({"userData": {"phone": "0151 9846-5432"}}),
    ]
    .into_iter()
    .enumerate()
    {
        let minute = i64::try_from(i).unwrap();
        leads.push(create(&store, &acme, body, minute).await.lead_id);
    }
    let body = json!({"userData": {"firstName": "Jonas", "lastName": "Kaya"}});
    create(&store, &other, body, 9).await;
    let found = |q: &str, search: Option<&str>| {
        let store = store.clone();
        let query = LeadQuery {
            q: crate::matching::q_words(q),
            search: search.map(str::to_owned),
            ..LeadQuery::default()
        };
        async move {
            let page = store.list_leads(acme.id, &query).await.unwrap();
            assert_eq!(
                page.total,
                page.leads.len() as u64,
                "the total counts the page"
            );
            let mut found = super::ids(&page.leads);
            found.sort();
            found
        }
    };
    let [jonas, anna, bob, cy, dee, eve, zoe, ben] = leads[..] else {
        unreachable!()
    };
    for (q, expected) in [
        ("Jonas Kaya", vec![jonas]),
        ("kaya JONAS", vec![jonas]),
        ("jo ka", vec![jonas]),
        ("muller", vec![anna]),
        ("MÜLLER", vec![anna]),
        ("crm-77", vec![bob]),
        ("spring", vec![cy]),
        ("cj0-xyz", vec![dee]),
        ("pricing", vec![eve]),
        ("jonas muller", vec![]),
        ("jo\u{0}nas", vec![]),
        ("x.io", vec![jonas, anna, bob, cy, dee, eve]),
        // Words of one or two characters, alone or with longer ones.
        ("ka", vec![jonas]),
        ("Ü", vec![anna, eve]),
        ("7", vec![bob]),
        ("ka jonas", vec![jonas]),
        ("a\u{0}", vec![]),
        ("jk zz", vec![]),
        // A phone number however it is written, with or without its country code.
        ("+49 151 1234 5698", vec![zoe]),
        ("015112345698", vec![zoe]),
        ("(0151) 1234-5698", vec![zoe]),
        ("0049 151 12345698", vec![zoe]),
        ("+4915198465432", vec![ben]),
        ("0151 9846 5432", vec![ben]),
        ("151 1234", vec![zoe]),
        ("5698", vec![zoe]),
        ("zoe 5698", vec![zoe]),
        ("0151 1234 5699", vec![]),
    ] {
        assert_eq!(found(q, None).await, expected, "q={q}");
    }
    // A lead's words change with it, and leave with it.
    let body = |name: &str| json!({"userData": {"firstName": name, "email": "qz@y.io"}, "formData": {"uniqueEventId": "ev-q"}});
    let renamed = create(&store, &acme, body("Qy"), 7).await.lead_id;
    assert_eq!(found("qy", None).await, [renamed]);
    let merged = create(&store, &acme, body("Wv"), 8).await;
    assert_eq!((merged.lead_id, merged.created), (renamed, false));
    assert_eq!(found("qy", None).await, Vec::<LeadId>::new());
    assert_eq!(found("wv", None).await, [renamed]);
    store
        .delete_lead(acme.id, renamed, &attributed(), at(9))
        .await
        .unwrap();
    assert_eq!(found("wv", None).await, Vec::<LeadId>::new());
    // `search` is as it was: the fields of the contract, exactly, accents included.
    assert_eq!(found("", Some("muller")).await, Vec::<LeadId>::new());
    assert_eq!(found("", Some("Müller")).await, [anna]);
    assert_eq!(found("anna", Some("am@")).await, [anna]);
}

/// The pages of a `q` search follow the creation times, newest or oldest first, whether
/// it has more matches than it counts or fewer, when some leads arrive after newer ones
/// (an import of older leads, say) and some share a creation time: a store may read such a
/// page by id, but only if it accounts for the leads out of that order, few or many. A
/// word nearly every lead holds ("example") narrows the matches as any other; another
/// project's leads never show.
pub async fn q_pages_follow_creation_times_whatever_order_leads_arrive_in<B: Backend>(backend: &B) {
    let store = backend.open().await;
    let other = project(&store, "other").await;
    let p = project(&store, "p").await;
    // As many leads as `q_counts_stop_past_their_bound` has, for the same reason.
    let mut leads = Vec::new();
    for n in 0..2_100_i64 {
        // One in ten arrives after newer leads; one in 25 shares the previous one's time.
        let minute = match n {
            n if n % 10 == 3 => n - 1_000,
            n if n % 25 == 0 => n - 1,
            n => n,
        };
        leads.push(create_bulk(&store, &p, n, minute).await);
        if n % 100 == 19 {
            create_bulk(&store, &other, n, minute).await;
        }
    }
    check_q_pages(&store, &p, &leads).await;
    // A thousand more, all older than every other (SQLite stops reading by id past 1,000
    // out of order).
    for n in 2_100..3_100_i64 {
        leads.push(create_bulk(&store, &p, n, n - 10_000).await);
    }
    check_q_pages(&store, &p, &leads).await;
}

/// Creates lead `n` of [`q_pages_follow_creation_times_whatever_order_leads_arrive_in`]
/// at `minute`: `(n, its creation time, its id)`.
async fn create_bulk<S: LeadStore>(
    store: &S,
    project: &Project,
    n: i64,
    minute: i64,
) -> (i64, DateTime<Utc>, LeadId) {
    let body = json!({"userData": {"firstName": format!("Bulk{n}"),
                                   "email": format!("bulk{n}@example.com")}});
    (
        n,
        at(minute),
        create(store, project, body, minute).await.lead_id,
    )
}

/// Checks pages of `q` searches of `leads` ([`create_bulk`]'s), each way: the first ones
/// and one past the count's bound, or every page of a search under it.
async fn check_q_pages<S: LeadStore>(
    store: &S,
    project: &Project,
    leads: &[(i64, DateTime<Utc>, LeadId)],
) {
    use crate::request::query::Q_COUNTED;
    for words in [&["bulk1", "example"][..], &["bulk"], &["bu"], &["bulk17"]] {
        let mut matching: Vec<_> = leads
            .iter()
            .filter(|(n, _, _)| {
                let text = format!("bulk{n} bulk{n}@example.com");
                words.iter().all(|word| text.contains(word))
            })
            .map(|(_, created_at, id)| (*created_at, *id))
            .collect();
        matching.sort();
        let oldest_first: Vec<LeadId> = matching.iter().map(|(_, id)| *id).collect();
        let newest_first: Vec<LeadId> = oldest_first.iter().rev().copied().collect();
        for (direction, expected) in [
            (SortDirection::Desc, &newest_first),
            (SortDirection::Asc, &oldest_first),
        ] {
            // Past the bound (its first pages, and one counted to its end), or under it
            // ("bulk17": 111 matches, counted exactly, the last page short).
            let pages = match matching.len() as u64 {
                all if all > 1_051 => [(1, Q_COUNTED + 1), (2, Q_COUNTED + 1), (21, 1_051)],
                all => [(1, all), (2, all), (3, all)],
            };
            for (page, total) in pages {
                let query = LeadQuery {
                    q: words.iter().map(|word| (*word).to_owned()).collect(),
                    sort: Sort {
                        field: SortField::CreatedAt,
                        direction,
                    },
                    page,
                    ..LeadQuery::default()
                };
                let found = store.list_leads(project.id, &query).await.unwrap();
                let context = format!("{words:?} {direction:?} page {page}");
                assert_eq!(
                    (found.total, found.total_is_lower_bound),
                    (total, total > Q_COUNTED),
                    "{context}"
                );
                let start = (page as usize - 1) * 50;
                let end = expected.len().min(start + 50);
                assert_eq!(ids(&found.leads), expected[start..end], "{context}");
            }
        }
    }
}

/// A `q` search counts its matches up to [`crate::request::query::Q_COUNTED`] or its page's
/// end, whichever is further, and says when more match: its pages are those of every
/// match all the same, a page past the bound is counted to its end, and its tab counts
/// stop at the same bound. `search` still counts every match.
pub async fn q_counts_stop_past_their_bound<B: Backend>(backend: &B) {
    use crate::request::query::Q_COUNTED;
    let store = backend.open().await;
    let p = project(&store, "p").await;
    // Enough leads that a store may find the matches through the words' index rather
    // than check every lead the other filters leave (SQLite does from 2,000).
    let leads = 2_100;
    let mut created = Vec::new();
    for n in 0..leads {
        let body = json!({"userData": {"firstName": format!("Bulk{n}")}});
        let minute = i64::try_from(n).unwrap();
        created.push(create(&store, &p, body, minute).await.lead_id);
    }
    let newest_first: Vec<LeadId> = created.iter().rev().copied().collect();
    let query = |words: &[&str], page: u32| LeadQuery {
        q: words.iter().map(|word| (*word).to_owned()).collect(),
        page,
        ..LeadQuery::default()
    };
    for words in [&["bulk"][..], &["bu"], &["bulk", "b"]] {
        let first = store.list_leads(p.id, &query(words, 1)).await.unwrap();
        assert_eq!(
            (first.total, first.total_is_lower_bound),
            (Q_COUNTED + 1, true),
            "{words:?}"
        );
        assert_eq!(ids(&first.leads), newest_first[..50], "{words:?}");
        let response = GetLeadsResponse::new(&first, 1, 50);
        assert_eq!((response.total_pages, response.has_more), (21, true));
        // Page 21 reaches past the first bound: counted one past its end.
        let further = store.list_leads(p.id, &query(words, 21)).await.unwrap();
        assert_eq!((further.total, further.total_is_lower_bound), (1_051, true));
        assert_eq!(ids(&further.leads), newest_first[1_000..1_050], "{words:?}");
        // The last page is counted to its end, which is every lead.
        let last = store.list_leads(p.id, &query(words, 42)).await.unwrap();
        assert_eq!((last.total, last.total_is_lower_bound), (leads, false));
        assert_eq!(ids(&last.leads), newest_first[2_050..], "{words:?}");
        let counts = store.status_counts(p.id, &query(words, 1)).await.unwrap();
        let counted: u64 = counts.iter().map(|(_, count)| count).sum();
        assert_eq!(counted, Q_COUNTED + 1, "{words:?}: {counts:?}");
        assert!(!query(words, 1).counted_all(counted));
    }
    // Fewer matches than the bound: counted exactly, tabs too ("Bulk7", "Bulk17", ...).
    let sevens = created.len() - (0..leads).filter(|n| !n.to_string().contains('7')).count();
    let seven = store
        .list_leads(p.id, &query(&["bulk", "7"], 1))
        .await
        .unwrap();
    assert_eq!(
        (seven.total, seven.total_is_lower_bound),
        (sevens as u64, false)
    );
    let counts = store.status_counts(p.id, &query(&["k7"], 1)).await.unwrap();
    let open = (0..leads)
        .filter(|n| n.to_string().starts_with('7'))
        .count();
    assert_eq!(counts[0], (LeadStatus::Open, open as u64));
    // `search` counts every match.
    let searched = LeadQuery {
        search: Some("bulk".to_owned()),
        ..LeadQuery::default()
    };
    let page = store.list_leads(p.id, &searched).await.unwrap();
    assert_eq!((page.total, page.total_is_lower_bound), (leads, false));
}
