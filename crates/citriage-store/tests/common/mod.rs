//! The store's tests run against both engines: a SQLite file in a temporary folder,
//! and a database of a throwaway PostgreSQL cluster started once per test binary
//! (removed when the binary exits). When no cluster can start (no server programs,
//! or the crate built without its `postgres` feature) the PostgreSQL half is skipped
//! with the reason printed.
#![allow(dead_code)]

use citriage_store::{Location, Store};

/// A fresh, empty store location of one backend.
pub struct Fresh {
    pub name: &'static str,
    pub location: Location,
    _dir: Option<tempfile::TempDir>,
}

impl Fresh {
    pub fn open(&self) -> Store {
        self.location.open().unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}

#[cfg(feature = "postgres")]
pub fn cluster() -> Result<&'static citriage_store::pg_cluster::TempCluster, String> {
    use std::sync::OnceLock;
    static CLUSTER: OnceLock<Result<citriage_store::pg_cluster::TempCluster, String>> = OnceLock::new();
    CLUSTER.get_or_init(citriage_store::pg_cluster::TempCluster::start).as_ref().map_err(|e| e.clone())
}

/// A fresh SQLite file.
pub fn sqlite() -> Fresh {
    sqlite_at("store.db")
}

/// A fresh SQLite file at this path under a new temporary folder.
pub fn sqlite_at(rel: &str) -> Fresh {
    let dir = tempfile::tempdir().expect("a temporary folder");
    Fresh { name: "sqlite", location: Location::Sqlite(dir.path().join(rel)), _dir: Some(dir) }
}

/// A fresh PostgreSQL database, or why there is none.
pub fn postgres() -> Result<Fresh, String> {
    #[cfg(feature = "postgres")]
    {
        let c = cluster()?;
        let url = c.create_database("store_test")?;
        Ok(Fresh { name: "postgres", location: Location::Postgres(url), _dir: None })
    }
    #[cfg(not(feature = "postgres"))]
    Err("citriage-store was built without its `postgres` feature".into())
}

/// A fresh store of each backend that can run here.
pub fn backends(test: &str) -> Vec<Fresh> {
    let mut out = vec![sqlite()];
    match postgres() {
        Ok(f) => out.push(f),
        Err(why) => eprintln!("{test}: PostgreSQL part skipped: {why}"),
    }
    out
}
