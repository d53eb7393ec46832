//! The backend conformance suite of `leadtrack-core`, run against SQLite.

use std::sync::Mutex;

use async_trait::async_trait;
use leadtrack_core::testkit::Backend;
use leadtrack_sqlite::SqliteStore;
use tempfile::TempDir;

/// Stores in temporary directories that live as long as the test.
#[derive(Default)]
struct Sqlite {
    dirs: Mutex<Vec<TempDir>>,
}

#[async_trait]
impl Backend for Sqlite {
    type Store = SqliteStore;

    async fn open(&self) -> SqliteStore {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("leadtrack.db");
        self.dirs.lock().unwrap().push(dir);
        SqliteStore::open(path).await.expect("open store")
    }

    async fn reopen(&self, store: SqliteStore) -> SqliteStore {
        let path = store.path().to_owned();
        store.close().await;
        drop(store);
        SqliteStore::open(path).await.expect("reopen store")
    }
}

leadtrack_core::conformance_tests!(Sqlite::default());
