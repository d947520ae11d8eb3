//! Fresh stores of each engine that can run here (SQLite always, PostgreSQL on a
//! throwaway cluster when one starts), as `--db` values.

#![allow(dead_code)]

pub struct Stores {
    pub dir: tempfile::TempDir,
    #[cfg(feature = "postgres")]
    pub cluster: Option<citriage_store::pg_cluster::TempCluster>,
}

impl Stores {
    /// Starts what can run; says why PostgreSQL is skipped when it cannot.
    pub fn new(test: &str) -> Stores {
        #[cfg(feature = "postgres")]
        let cluster = match citriage_store::pg_cluster::TempCluster::start() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("{test}: PostgreSQL part skipped: {e}");
                None
            }
        };
        #[cfg(not(feature = "postgres"))]
        eprintln!("{test}: PostgreSQL part skipped: built without the `postgres` feature");
        Stores {
            dir: tempfile::tempdir().unwrap(),
            #[cfg(feature = "postgres")]
            cluster,
        }
    }

    /// The engines available: "sqlite", and "postgres" when its cluster started.
    pub fn engines(&self) -> Vec<&'static str> {
        let mut out = vec!["sqlite"];
        #[cfg(feature = "postgres")]
        if self.cluster.is_some() {
            out.push("postgres");
        }
        out
    }

    /// A new, empty store of `engine`.
    pub fn fresh_on(&self, engine: &str, name: &str) -> String {
        match engine {
            #[cfg(feature = "postgres")]
            "postgres" => self.cluster.as_ref().unwrap().create_database(name).unwrap(),
            _ => self.dir.path().join(format!("{name}.db")).display().to_string(),
        }
    }

    /// A new, empty store of each available engine.
    pub fn fresh(&self, name: &str) -> Vec<(&'static str, String)> {
        self.engines().into_iter().map(|e| (e, self.fresh_on(e, name))).collect()
    }
}
