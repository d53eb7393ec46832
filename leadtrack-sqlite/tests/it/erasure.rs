//! An erased person is gone from the SQLite files themselves: once the erasure answers
//! (the store checkpoints after it), neither the database file nor its WAL holds their email, phone, names or
//! words, byte for byte, in any case, while another person's stay.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use leadtrack_core::activity::Attribution;
use leadtrack_core::lead::LeadData;
use leadtrack_core::request::{CreateRoute, NewLead};
use leadtrack_core::source::{NewLeadFetch, SourceKind};
use leadtrack_core::types::{LeadId, LeadIdentifier, ProjectId};
use leadtrack_core::{Admin, JobQueue, LeadStore};
use leadtrack_sqlite::SqliteStore;
use rusqlite::Connection;
use serde_json::json;

/// The person's lead id at Meta, which a fetch of their lead form's lead holds.
const LEADGEN_ID: &str = "leadgen-7788990011";

/// What the person submitted, each written so that it appears nowhere else.
const ERASED: [&str; 7] = [
    LEADGEN_ID,
    "quenby.zwart@erase-me.example",
    "Quenby",
    "Zwartkopf",
    "+31 6 4817 2953",
    "Marmalade skyscraper",
    "Vexillology Ltd",
];

fn lead(email: &str, first: &str, last: &str, phone: &str, words: &str, company: &str) -> LeadData {
    let body = json!({"projectId": "acme",
        "userData": {"email": email, "firstName": first, "lastName": last, "phone": phone,
            "companyName": company},
        "formData": {"formName": "Contact", "message": words},
        "attributionData": {"utm_source": "google", "gclid": format!("Cj0-{last}")}});
    let serde_json::Value::Object(body) = body else {
        unreachable!()
    };
    NewLead::from_object(body, CreateRoute::Server)
        .expect("a valid lead")
        .data
}

/// Every file of the database, as bytes.
fn files_of(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for suffix in ["", "-wal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        bytes.extend(std::fs::read(PathBuf::from(name)).unwrap_or_default());
    }
    bytes
}

/// Whether `bytes` hold `text` as written, lowercased, or as its digits alone.
fn holds(bytes: &[u8], text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let forms = [text.to_owned(), text.to_lowercase(), digits];
    forms
        .iter()
        .filter(|form| form.len() >= 6)
        .any(|form| bytes.windows(form.len()).any(|w| w == form.as_bytes()))
}

/// Waits until the word index holds every lead up to `lead` (it is written after the
/// leads commit).
async fn indexed(conn: &Connection, lead: LeadId) {
    for _ in 0..200 {
        let to: i64 = conn
            .query_row("SELECT indexed_to FROM lead_words_state", [], |row| {
                row.get(0)
            })
            .unwrap();
        if to >= lead.0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the word index never reached lead {lead:?}");
}

async fn create(store: &SqliteStore, project: ProjectId, data: LeadData) -> LeadId {
    let created = store.create_lead(project, data, Utc::now()).await;
    created.expect("a lead").lead_id
}

#[tokio::test]
async fn an_erased_person_is_in_neither_the_file_nor_its_wal_once_the_erasure_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leads.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let acme = store
        .create_project(
            leadtrack_core::project::NewProject {
                public_id: Some("acme".into()),
                name: "Acme".into(),
                currency: None,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let [_, email, first, last, phone, words, company] = ERASED;
    // The first came from Meta's lead form: announced, fetched, then created.
    let fetch = NewLeadFetch {
        kind: SourceKind::MetaLeadAds,
        external_id: LEADGEN_ID.into(),
        announced: json!({"leadgen_id": LEADGEN_ID, "form_id": "4455"}),
    };
    assert!(
        store
            .queue_lead_fetch(acme.id, &fetch, Utc::now())
            .await
            .unwrap()
    );
    let mut fetched = lead(email, first, last, phone, words, company);
    let event_id = serde_json::Value::from(LEADGEN_ID);
    fetched.form_data.insert("uniqueEventId".into(), event_id);
    let first_lead = create(&store, acme.id, fetched).await;
    let kept = ["wilhelmina.kept@stay.example", "Wilhelmina", "Staysfield"];
    create(
        &store,
        acme.id,
        lead(
            kept[0],
            kept[1],
            kept[2],
            "+31 6 1111 2222",
            "Stays here",
            "Kept BV",
        ),
    )
    .await;
    // The person again, a week of words later: the duplicate of the first.
    let again = lead(
        email,
        first,
        last,
        phone,
        "Marmalade skyscraper again",
        company,
    );
    let last_lead = create(&store, acme.id, again).await;
    let conn = Connection::open(&path).unwrap();
    indexed(&conn, last_lead).await;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let before = files_of(&path);
    for value in ERASED {
        assert!(holds(&before, value), "{value} is stored before");
    }
    // Each lead's data as stored (packed: compressed, so not found by its values above).
    let packed: Vec<Vec<u8>> = [first_lead, last_lead]
        .iter()
        .map(|lead| {
            conn.query_row("SELECT data FROM leads WHERE id = ?1", [lead.0], |row| {
                row.get(0)
            })
            .unwrap()
        })
        .collect();
    for data in &packed {
        assert!(before.windows(data.len()).any(|w| w == data));
    }

    let erased = store
        .erase_person(
            acme.id,
            &LeadIdentifier::Email(email.into()),
            &Attribution::admin(),
            Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(erased.erased, 2);
    // The store checkpointed on its own: the WAL is empty.
    let wal = std::fs::metadata(path.with_extension("db-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "the WAL was emptied");
    let after = files_of(&path);
    for value in ERASED {
        assert!(!holds(&after, value), "{value} is still in the files");
    }
    for data in &packed {
        let left = after.windows(data.len()).any(|w| w == data);
        assert!(!left, "an erased lead's stored data is still in the files");
    }
    for value in kept {
        assert!(holds(&after, value), "{value}, another person's, stays");
    }
}
