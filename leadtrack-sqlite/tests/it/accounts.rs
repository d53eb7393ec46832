//! Accounts on SQLite beyond the conformance suite: what the file holds of sessions, and
//! the rows it forgets so that tables do not grow forever.

use chrono::{DateTime, Duration, TimeZone, Utc};
use leadtrack_core::Accounts;
use leadtrack_core::StoreError;
use leadtrack_core::account::{Device, NewUser, Password, SessionToken, Throttled, User};
use leadtrack_core::store::Entity;
use leadtrack_sqlite::SqliteStore;

fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap() + Duration::minutes(minutes)
}

async fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("db")).await.unwrap();
    (dir, store)
}

async fn ada(store: &SqliteStore) -> User {
    let password = Password::new("correct horse battery").unwrap();
    let new = NewUser::new("ada@example.com", None, &password).unwrap();
    store.create_user(new, at(0)).await.unwrap()
}

/// Closes the store and opens its file directly.
async fn raw(store: SqliteStore) -> rusqlite::Connection {
    let path = store.path().to_owned();
    store.close().await;
    rusqlite::Connection::open(path).unwrap()
}

fn count(conn: &rusqlite::Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
        row.get(0)
    })
    .unwrap()
}

#[tokio::test]
async fn only_the_hash_of_a_session_token_is_stored() {
    let (_dir, store) = store().await;
    let ada = ada(&store).await;
    let token = SessionToken::generate();
    store
        .create_session(ada.id, &token.hash(), &Device::default(), at(0))
        .await
        .unwrap();
    let conn = raw(store).await;
    let stored: Vec<u8> = conn
        .query_row("SELECT hash FROM sessions", [], |row| row.get(0))
        .unwrap();
    assert_eq!(stored, token.hash().0);
    let dump: String = conn
        .query_row(
            "SELECT group_concat(hex(hash) || user_id || created_at || last_seen_at) FROM sessions",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(!dump.to_lowercase().contains(token.expose()));
}

#[tokio::test]
async fn a_new_session_prunes_the_users_dead_ones() {
    let (_dir, store) = store().await;
    let ada = ada(&store).await;
    let old = SessionToken::generate().hash();
    let live = SessionToken::generate().hash();
    store
        .create_session(ada.id, &old, &Device::default(), at(0))
        .await
        .unwrap();
    store
        .create_session(ada.id, &live, &Device::default(), at(60))
        .await
        .unwrap();
    // 13 hours on, the first has been idle too long; the second was used an hour ago.
    store.touch_session(&live, at(12 * 60)).await.unwrap();
    let newest = SessionToken::generate().hash();
    store
        .create_session(ada.id, &newest, &Device::default(), at(13 * 60))
        .await
        .unwrap();
    assert!(store.session(&live, at(13 * 60)).await.is_ok());
    assert_eq!(count(&raw(store).await, "sessions"), 2);
}

#[tokio::test]
async fn touching_never_moves_a_session_back_in_time() {
    let (_dir, store) = store().await;
    let ada = ada(&store).await;
    let hash = SessionToken::generate().hash();
    store
        .create_session(ada.id, &hash, &Device::default(), at(0))
        .await
        .unwrap();
    store.touch_session(&hash, at(10 * 60)).await.unwrap();
    store.touch_session(&hash, at(60)).await.unwrap();
    let (_, session) = store.session(&hash, at(20 * 60)).await.unwrap();
    assert_eq!(session.last_seen_at, at(10 * 60));
    // Touching an ended session is no error and does not bring it back.
    store.end_sessions(ada.id).await.unwrap();
    store.touch_session(&hash, at(20 * 60)).await.unwrap();
    assert!(matches!(
        store.session(&hash, at(20 * 60)).await,
        Err(StoreError::NotFound(Entity::Session))
    ));
}

#[tokio::test]
async fn a_session_started_while_disabled_stays_dead_once_enabled() {
    let (_dir, store) = store().await;
    let ada = ada(&store).await;
    store.set_user_disabled(ada.id, true).await.unwrap();
    // A sign-in that checked the user before they were disabled.
    let raced = SessionToken::generate().hash();
    store
        .create_session(ada.id, &raced, &Device::default(), at(1))
        .await
        .unwrap();
    store.set_user_disabled(ada.id, false).await.unwrap();
    assert!(matches!(
        store.session(&raced, at(2)).await,
        Err(StoreError::NotFound(Entity::Session))
    ));
    let unknown = store
        .create_session(
            leadtrack_core::UserId(i64::MAX),
            &raced,
            &Device::default(),
            at(2),
        )
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound(Entity::User))));
}

#[tokio::test]
async fn failed_sign_ins_older_than_a_day_are_forgotten() {
    let (_dir, store) = store().await;
    for minute in [0, 10, 24 * 60 + 5] {
        store
            .record_throttled(
                Throttled::FailedSignIn,
                "ada@example.com",
                "192.0.2.1",
                at(minute),
            )
            .await
            .unwrap();
    }
    let failures = store
        .throttled_attempts(
            Throttled::FailedSignIn,
            "ada@example.com",
            "192.0.2.1",
            at(-1),
        )
        .await
        .unwrap();
    assert_eq!(failures.by_email, [at(10), at(24 * 60 + 5)]);
    assert_eq!(failures.by_address, [at(10), at(24 * 60 + 5)]);
    assert_eq!(count(&raw(store).await, "login_failures"), 2);
}

#[tokio::test]
async fn errors_name_no_secret() {
    let (_dir, store) = store().await;
    let password = Password::new("correct horse battery").unwrap();
    let new = NewUser::new("ada@example.com", None, &password).unwrap();
    let phc = new.password_hash.as_phc().to_owned();
    store.create_user(new.clone(), at(0)).await.unwrap();
    let err = store.create_user(new, at(1)).await.unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(shown.contains("ada@example.com"), "{shown}");
    assert!(
        !shown.contains(&phc) && !shown.contains("argon2"),
        "{shown}"
    );
}
