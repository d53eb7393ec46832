//! The listing's plans, and its searches against a check of every lead.

use super::index::{MEMBER_FEW, MEMBERS_LEADS};
use super::*;
use crate::rows::plan_of;
use chrono::Utc;
use leadtrack_core::matching;
use leadtrack_core::request::query::{AssigneeFilter, Sort};
use leadtrack_core::time::from_millis;
use strum::VariantArray;

/// Every listing's plan reaches leads through an index on the project: no query scans
/// the table, so no query reads another project's leads.
#[test]
fn every_filter_and_sort_searches_within_the_project() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let base = LeadQuery::default;
    let mut queries = vec![
        base(),
        LeadQuery {
            status: Some(vec![LeadStatus::Open, LeadStatus::Rated]),
            ..base()
        },
        LeadQuery {
            form_name: Some("Contact".into()),
            ..base()
        },
        LeadQuery {
            unique_identifier: Some("crm-1".into()),
            ..base()
        },
        LeadQuery {
            email: Some("a@x.io".into()),
            ..base()
        },
        LeadQuery {
            phone: Some("+1 555".into()),
            ..base()
        },
        LeadQuery {
            created_from: Some(Utc::now()),
            created_to: Some(Utc::now()),
            ..base()
        },
        LeadQuery {
            search: Some("ada".into()),
            ..base()
        },
        LeadQuery {
            gclid_exists: Some(true),
            fbc_exists: Some(false),
            ..base()
        },
    ];
    for &field in SortField::VARIANTS {
        for direction in [SortDirection::Asc, SortDirection::Desc] {
            queries.push(LeadQuery {
                sort: Sort { field, direction },
                ..base()
            });
        }
    }
    for query in queries {
        let (filter, params) = filter(ProjectId(1), &query, false);
        let count = format!("SELECT count(*) FROM leads WHERE {filter}");
        let mut page_params = params.clone();
        page_params.extend([SqlValue::Integer(10), SqlValue::Integer(0)]);
        let page = format!(
            "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
            order_by(&query)
        );
        for (sql, params) in [(count, params), (page, page_params)] {
            let plan = plan_of(&conn, &sql, &params);
            // Every step on the leads table searches an index within the project (or
            // looks up single rows by id); the trigram index is searched by MATCH.
            let mut on_leads = 0;
            for step in &plan {
                if step.contains("leads_search") {
                    assert!(
                        step.contains("VIRTUAL TABLE INDEX 0:M"),
                        "{query:?}: {step}"
                    );
                } else if step.contains("leads") {
                    on_leads += 1;
                    let confined = step.starts_with("SEARCH leads USING")
                        && (step.contains("(project_id=?") || step.contains("(rowid=?)"));
                    assert!(confined, "{query:?} is not confined to the project: {step}");
                }
            }
            assert!(on_leads > 0, "{sql}: {plan:?}");
        }
    }
}

/// A form's exact name is found through the index of its key, and checked on each lead
/// (core's `LeadQuery::facet_filters`).
#[test]
fn a_forms_name_is_found_through_its_keys_index() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let query = LeadQuery {
        form_name: Some("Contact".into()),
        ..LeadQuery::default()
    };
    let (filter, params) = filter(ProjectId(1), &query, false);
    let plan = plan_of(
        &conn,
        &format!("SELECT id FROM leads WHERE {filter}"),
        &params,
    );
    assert!(
        plan.iter()
            .any(|step| step.contains("USING INDEX leads_form_key (project_id=? AND form_key=?)")),
        "{plan:?}"
    );
    assert_eq!(
        params[1..],
        [
            SqlValue::Text("contact".into()),
            SqlValue::Text("Contact".into())
        ]
    );
}

/// A listing with a long word is found through the words' index, which drives: each
/// lead it finds, and each above its mark, is read by id, so a count's LIMIT stops the
/// index's reading too. Without one, a page of a `search` or `q` is read along the
/// project's creation-time index, in both directions, without sorting.
#[test]
fn words_drive_through_their_index_and_short_ones_walk_in_order() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let plan =
        |sql: &str, params: &[SqlValue]| crate::rows::without_assignee(plan_of(&conn, sql, params));
    for (query, looked_up) in [
        (
            LeadQuery {
                q: vec!["ada".into(), "k".into()],
                status: Some(vec![LeadStatus::Open]),
                ..LeadQuery::default()
            },
            r#"("ada")"#,
        ),
        (
            LeadQuery {
                search: Some("Ada".into()),
                ..LeadQuery::default()
            },
            r#"{search_text} : ("ada")"#,
        ),
    ] {
        let words = Words::of(&conn, ProjectId(1), &query).unwrap().unwrap();
        assert_eq!(words.query.as_deref(), Some(looked_up));
        let (sql, params) = matches(ProjectId(1), &query, Some(&words), "1", 1_001);
        assert_eq!(
            plan(&sql, &params),
            [
                "CO-ROUTINE hits",
                "COMPOUND QUERY",
                "LEFT-MOST SUBQUERY",
                "SCAN lead_words VIRTUAL TABLE INDEX 0:M2><",
                "UNION ALL",
                "SEARCH leads USING INTEGER PRIMARY KEY (rowid>?)",
                "SCAN hits",
                "SEARCH leads USING INTEGER PRIMARY KEY (rowid=?)",
            ],
            "{query:?}"
        );
    }
    let common: String = (0..500)
        .filter_map(|n| char::from_u32(0x4e00 + n))
        .map(|c| format!(" ad{c}"))
        .collect();
    conn.execute(
        "INSERT INTO lead_words (rowid, search_text, q_text) VALUES (1, ?1, '')",
        [common],
    )
    .unwrap();
    for direction in [SortDirection::Asc, SortDirection::Desc] {
        let sort = Sort {
            field: SortField::CreatedAt,
            direction,
        };
        // Words of one character, and "ad" when it begins more trigrams than are looked up.
        let search = LeadQuery {
            search: Some("ad".into()),
            sort,
            ..LeadQuery::default()
        };
        let q = LeadQuery {
            q: vec!["a".into(), "k".into()],
            sort,
            ..LeadQuery::default()
        };
        for query in [search, q] {
            assert_eq!(Words::of(&conn, ProjectId(1), &query).unwrap(), None);
            let (filter, mut params) = filter(ProjectId(1), &query, false);
            params.extend([SqlValue::Integer(10), SqlValue::Integer(0)]);
            let page = format!(
                "SELECT {LEAD_COLUMNS} FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
                order_by(&query)
            );
            assert_eq!(
                plan(&page, &params),
                ["SEARCH leads USING INDEX leads_created (project_id=?)"],
                "{direction:?}"
            );
            // Their count up to the bound, in no order, reads along it too: another index
            // on the project would read the leads' rows in random order.
            let (matches, params) = matches(ProjectId(1), &query, None, "1", 1_001);
            let count = plan(&format!("SELECT count(*) FROM ({matches})"), &params);
            assert!(
                count.contains(&"SEARCH leads USING INDEX leads_created (project_id=?)".into()),
                "{count:?}"
            );
        }
    }
}

/// A `q` word that most of the newest leads hold is checked on each lead when another of
/// its words is looked up, and looked up when none is; one of two characters that one in
/// twenty hold is never looked up.
#[test]
fn a_common_word_is_looked_up_only_when_no_rarer_one_is() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    for n in 0..300_i64 {
        let name = match n {
            n if n % 50 == 0 => "lovelace",
            n if n % 12 == 0 => "okafor",
            _ => "hopper",
        };
        let q = format!("{name}\nlead{n}@example.com");
        crate::rows::insert_test_leads(&conn, &[(n + 1, 1, "open", n * 1_000, &q, &q)]);
    }
    let q = |words: &[&str]| LeadQuery {
        q: words.iter().map(|word| (*word).to_owned()).collect(),
        ..LeadQuery::default()
    };
    for (query, looked_up) in [
        (q(&["lovelace", "example"]), Some(r#"("lovelace")"#)),
        (q(&["example", "lovelace"]), Some(r#"("lovelace")"#)),
        (q(&["example"]), Some(r#"("example")"#)),
        (
            q(&["example", "hopper"]),
            Some(r#"("example" AND "hopper")"#),
        ),
        (q(&["ex", "lovelace"]), Some(r#"("lovelace")"#)),
        // One lead in twelve: looked up beside the rarer word, not checked on its matches.
        (
            q(&["lovelace", "okafor"]),
            Some(r#"("lovelace" AND "okafor")"#),
        ),
        (q(&["ex"]), None),
    ] {
        let words = Words::of(&conn, ProjectId(1), &query).unwrap();
        assert_eq!(
            words.and_then(|words| words.query).as_deref(),
            looked_up,
            "{:?}",
            query.q
        );
    }
}

/// Every search, and every listing counted from the kept counts (by status, facet or
/// dates), lists and counts what a check of every lead finds, whether its leads are in
/// the words' index and the counts, above their mark, or changed and deleted since.
#[test]
fn searches_find_the_same_leads_indexed_or_not() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let names = ["okafor", "lovelace", "okonkwo", "hopper", "müller", "kay"];
    for n in 0..240_i64 {
        let name = names[usize::try_from(n % 6).unwrap()];
        let status = ["open", "rated", "spam"][usize::try_from(n % 7 % 3).unwrap()];
        // Creation times out of id order, as an import of older leads makes them, ten
        // minutes apart: 40 hours, each counted per hour once indexed.
        let created = (n * 7_919) % 240 * 600_000;
        let search = format!("{name}\nlead{n}@example.com");
        let q = format!("{}\nlead{n}@example.com\nref {n}", matching::fold(name));
        let project = 1 + i64::from(n % 5 == 0);
        crate::rows::insert_test_leads(&conn, &[(n + 1, project, status, created, &search, &q)]);
    }
    conn.execute_batch(
        "UPDATE leads SET has_gclid = 1 WHERE id % 3 = 0;
         UPDATE leads SET assigned_to = 5 WHERE id % 4 = 1;",
    )
    .unwrap();
    let theirs = Some(AssigneeFilter::User(leadtrack_core::types::UserId(5)));
    let queries = {
        let q = |words: &[&str]| LeadQuery {
            q: words.iter().map(|word| (*word).to_owned()).collect(),
            limit: 7,
            page: 2,
            ..LeadQuery::default()
        };
        let search = |term: &str| LeadQuery {
            search: Some(term.to_owned()),
            ..LeadQuery::default()
        };
        vec![
            q(&["oka"]),
            q(&["ok"]),
            q(&["oko", "1"]),
            q(&["muller"]),
            // A word every lead holds beside a rarer one, and two such words.
            q(&["lovelace", "example"]),
            q(&["example", "lead"]),
            // More matches than a page among the newest leads, or (sorted the other way)
            // the oldest: walked along the inbox's order once all are indexed.
            LeadQuery {
                limit: 3,
                page: 1,
                ..q(&["ad23"])
            },
            LeadQuery {
                sort: Sort {
                    field: SortField::CreatedAt,
                    direction: SortDirection::Asc,
                },
                limit: 3,
                ..q(&["ad3"])
            },
            LeadQuery {
                status: Some(vec![LeadStatus::Spam, LeadStatus::Rated]),
                sort: Sort {
                    field: SortField::CreatedAt,
                    direction: SortDirection::Asc,
                },
                ..q(&["lead1"])
            },
            search("OKAF"),
            LeadQuery {
                status: Some(vec![LeadStatus::Rated]),
                ..search("oka")
            },
            search("ok"),
            // A member's few leads, read through their own index.
            LeadQuery {
                assignee: theirs,
                ..q(&["oka"])
            },
            LeadQuery {
                assignee: theirs,
                ..search("ok")
            },
            search("müll"),
            search("@example"),
            // Counted from the kept counts, and the leads above their mark.
            LeadQuery {
                status: Some(vec![LeadStatus::Rated, LeadStatus::Lost]),
                ..LeadQuery::default()
            },
            LeadQuery {
                gclid_exists: Some(true),
                ..LeadQuery::default()
            },
            LeadQuery {
                gclid_exists: Some(false),
                status: Some(vec![LeadStatus::Open]),
                ..LeadQuery::default()
            },
            LeadQuery {
                created_from: Some(from_millis(2 * 3_600_000 + 300_000)),
                created_to: Some(from_millis(30 * 3_600_000)),
                ..LeadQuery::default()
            },
        ]
    };
    // What a check of every lead of project 1 finds: the page's ids, and the total.
    let expected = |conn: &Connection, query: &LeadQuery| -> (Vec<i64>, u64) {
        let (filter, params) = filter(ProjectId(1), query, false);
        let sql = format!(
            "SELECT id FROM leads WHERE {filter} ORDER BY {}",
            order_by(query)
        );
        let all: Vec<i64> = conn
            .prepare(&sql)
            .unwrap()
            .query_map(params_from_iter(&params), |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let total = query
            .counted()
            .map_or(all.len() as u64, |bound| (all.len() as u64).min(bound));
        let page = all
            .into_iter()
            .skip(usize::try_from(query.offset()).unwrap())
            .take(usize::try_from(query.limit).unwrap())
            .collect();
        (page, total)
    };
    let check = |conn: &Connection, stage: &str| {
        for query in &queries {
            let page = list(conn, ProjectId(1), query).unwrap().parse().unwrap();
            let found: Vec<i64> = page.leads.iter().map(|lead| lead.id.0).collect();
            let (ids, total) = expected(conn, query);
            assert!(total > 0, "{stage}: {query:?} finds something");
            assert_eq!((found, page.total), (ids, total), "{stage}: {query:?}");
            // An inbox's page is the same, and its tabs count what `status_counts` does
            // (none past a `q`'s bound), whether they filter as the page does or not.
            for tabs in [query.clone(), LeadQuery::default()] {
                let (inbox, counts) = inbox_page(conn, ProjectId(1), query, &tabs).unwrap();
                let inbox = inbox.parse().unwrap();
                assert_eq!(inbox, page, "{stage}: {query:?}");
                let expected = (!page.total_is_lower_bound)
                    .then(|| status_counts(conn, ProjectId(1), &tabs).unwrap());
                assert_eq!(counts, expected, "{stage}: {query:?}, tabs {tabs:?}");
            }
        }
    };
    check(&conn, "none indexed");
    crate::words::catch_up(&conn, 100).unwrap();
    check(&conn, "some indexed");
    crate::words::catch_up(&conn, 1_000).unwrap();
    check(&conn, "all indexed");
    conn.execute_batch(
        "UPDATE leads SET q_text = 'okafor', search_text = 'okafor' WHERE id % 4 = 0;
         UPDATE leads SET status = 'lost', has_gclid = 1 - has_gclid WHERE id % 8 = 1;
         UPDATE leads SET created_at = created_at + 7_200_000 WHERE id % 10 = 3;
         DELETE FROM leads WHERE id % 9 = 0;",
    )
    .unwrap();
    check(&conn, "changed after they were indexed");
    assert_eq!(crate::derived::check(&conn).unwrap(), Vec::<String>::new());
}

/// A member's leads (the Mine tab, and its count) are found through their own index,
/// whatever else filters: a range of dates, a status; and counted in it alone.
#[test]
fn a_members_leads_are_read_through_their_index() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let params = [1, 5, MEMBER_FEW].map(SqlValue::Integer);
    let plan = plan_of(&conn, MEMBERS_LEADS, &params);
    assert!(
        plan.iter().any(|step| step
            == "SEARCH leads USING COVERING INDEX leads_assigned (project_id=? AND assigned_to=?)"),
        "{plan:?}"
    );
    let query = LeadQuery {
        assignee: Some(AssigneeFilter::User(leadtrack_core::types::UserId(5))),
        status: Some(vec![LeadStatus::Open]),
        created_from: Some(Utc::now()),
        created_to: Some(Utc::now()),
        ..LeadQuery::default()
    };
    for query in [query.clone(), query.any_status()] {
        let (filter, params) = filter(ProjectId(1), &query, false);
        let sql = format!("SELECT status, count(*) FROM leads WHERE {filter} GROUP BY status");
        let plan = plan_of(&conn, &sql, &params);
        assert!(
            plan[0].starts_with(
                "SEARCH leads USING INDEX leads_assigned (project_id=? AND assigned_to=?)"
            ),
            "{plan:?}"
        );
    }
}

/// A search of a member's leads reads them through their own index when they are fewer
/// than [`MEMBER_FEW`], and looks its words up in the words' index when they are not.
#[test]
fn a_members_few_leads_are_searched_without_the_words_index() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let leads: Vec<_> = (1..=MEMBER_FEW)
        .map(|id| (id, 1, "open", id, "okafor", "okafor"))
        .collect();
    crate::rows::insert_test_leads(&conn, &leads);
    conn.execute_batch("UPDATE leads SET assigned_to = 5 WHERE id > 1")
        .unwrap();
    crate::words::catch_up(&conn, 10_000).unwrap();
    let query = LeadQuery {
        assignee: Some(AssigneeFilter::User(leadtrack_core::types::UserId(5))),
        q: vec!["okafor".into()],
        ..LeadQuery::default()
    };
    assert_eq!(Words::of(&conn, ProjectId(1), &query).unwrap(), None);
    conn.execute_batch("UPDATE leads SET assigned_to = 5 WHERE id = 1")
        .unwrap();
    let words = Words::of(&conn, ProjectId(1), &query).unwrap().unwrap();
    assert_eq!(words.query.as_deref(), Some(r#"("okafor")"#));
    let page = list(&conn, ProjectId(1), &query).unwrap().parse().unwrap();
    assert_eq!((page.leads.len(), page.total), (50, 1_001));
}

/// A page of the default listing (every status but spam, newest first), however deep,
/// finds its ids in the inbox's index alone: the leads it skips are not read.
#[test]
fn a_deep_page_skips_its_leads_in_the_index_alone() {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    let query = LeadQuery {
        page: 2_000,
        ..LeadQuery::default()
    };
    let (filter, mut params) = filter(ProjectId(1), &query, false);
    params.extend([SqlValue::Integer(25), SqlValue::Integer(49_975)]);
    let ids = format!(
        "SELECT id FROM leads WHERE {filter} ORDER BY {} LIMIT ? OFFSET ?",
        order_by(&query)
    );
    assert_eq!(
        plan_of(&conn, &ids, &params),
        ["SEARCH leads USING COVERING INDEX leads_created (project_id=?)"]
    );
}

/// A page whose matches lie among the leads its walk along the inbox's order begins at
/// (the newest; sorted the other way, the oldest) is walked; one whose matches lie far
/// from there, or that asks for more than they are, is sorted from them.
#[test]
fn a_page_near_its_walks_start_is_walked_and_one_far_from_it_is_sorted() {
    let conn = numbered_leads();
    let walked = |query: &LeadQuery| {
        let words = Words::of(&conn, ProjectId(1), query).unwrap().unwrap();
        let once = words.read_once(&conn, ProjectId(1), SORTED_MOST).unwrap();
        let ids = once.as_ref().and_then(Words::read).unwrap();
        let ends = id_ends(&conn).unwrap();
        walkable(query) && walks_sooner(query, ids, ids.len() as u64, ends)
    };
    let walks = |word: &str, direction: SortDirection, limit: u32| {
        walked(&LeadQuery {
            q: vec![word.to_owned()],
            sort: Sort {
                field: SortField::CreatedAt,
                direction,
            },
            limit,
            ..LeadQuery::default()
        })
    };
    use SortDirection::{Asc, Desc};
    // lead23 and lead230 to lead239: the newest.
    assert!(walks("ad23", Desc, 3));
    assert!(!walks("ad23", Asc, 3));
    assert!(!walks("ad23", Desc, 50), "a page longer than the matches");
    // lead3 and lead30 to lead39: among the oldest.
    assert!(walks("ad3", Asc, 3));
    assert!(!walks("ad3", Desc, 3));
    // Another filter than the words: sorted.
    let filtered = LeadQuery {
        q: vec!["ad23".to_owned()],
        limit: 3,
        gclid_exists: Some(false),
        ..LeadQuery::default()
    };
    assert!(!walked(&filtered));
}

/// Under a bound, a page whose matches are more than the few read first, and that lies
/// among those, is walked without reading the rest; one whose first matches lie far from
/// the walk's start has every candidate read, to be sorted from.
#[test]
fn a_page_among_the_candidates_read_first_is_walked_without_the_rest() {
    let conn = numbered_leads();
    let read = |word: &str, direction: SortDirection| {
        let query = LeadQuery {
            q: vec![word.to_owned()],
            limit: 3,
            sort: Sort {
                field: SortField::CreatedAt,
                direction,
            },
            ..LeadQuery::default()
        };
        let words = Words::of(&conn, ProjectId(1), &query).unwrap().unwrap();
        let (once, walk) = read_or_walk(&conn, ProjectId(1), &query, &words).unwrap();
        (once.as_ref().and_then(Words::read).map(<[i64]>::len), walk)
    };
    use SortDirection::{Asc, Desc};
    // lead23 and lead230 to lead239: 11 matches, more than the 5 read first, the page
    // among the newest.
    assert_eq!(read("ad23", Desc), (None, true));
    // lead1, lead10 to lead19 and lead100 to lead199, the page among the oldest.
    assert_eq!(read("ad1", Asc), (None, true));
    // lead3 and lead30 to lead39: 11 among the oldest, read to be sorted from.
    assert_eq!(read("ad3", Desc), (Some(11), false));
    // lead24 alone: fewer than the 5 read first, which are then every one.
    assert_eq!(read("ad24", Desc), (Some(1), false));
}

/// A store of 240 leads, `lead0@example.com` to `lead239@example.com` in the order of their
/// ids and creation times, indexed.
fn numbered_leads() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::schema::migrate(&mut conn).unwrap();
    for n in 0..240_i64 {
        let q = format!("lead{n}@example.com");
        crate::rows::insert_test_leads(&conn, &[(n + 1, 1, "open", n * 1_000, &q, &q)]);
    }
    crate::words::catch_up(&conn, 1_000).unwrap();
    conn
}
