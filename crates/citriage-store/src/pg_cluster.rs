//! A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` into a fresh
//! temporary folder, `pg_ctl start` listening only on a Unix socket in that folder,
//! databases created on demand, and everything stopped and removed when the
//! [`TempCluster`] is dropped, or, should the process die first, by a small watchdog
//! that notices the process is gone. PostgreSQL refuses to run as root: as root the
//! cluster runs as the `postgres` system user (through `runuser`) in a folder that
//! user owns.
//!
//! The server programs are looked for in `$CITRIAGE_PG_BIN`, then on `PATH`, then in
//! Debian's `/usr/lib/postgresql/<version>/bin` (newest version first).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A running throwaway cluster.
pub struct TempCluster {
    dir: PathBuf,
    bin: PathBuf,
    /// `Some(user)` when the server runs as another user (root started it).
    run_as: Option<String>,
    port: u16,
    watchdog: Option<Child>,
    databases: AtomicU64,
}

/// Server settings for a cluster.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// Durable writes (`fsync`, full page writes). Off for tests (much faster);
    /// on for benchmarks. Commits never wait for their log to reach the disk
    /// (`synchronous_commit = off`), as SQLite's `synchronous = NORMAL` with a
    /// write-ahead log: a crash of the machine may lose the last commits, never
    /// consistency.
    pub durable: bool,
    /// `shared_buffers`, e.g. `128MB`.
    pub shared_buffers: String,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings { durable: false, shared_buffers: "128MB".into() }
    }
}

fn find_bin() -> Result<PathBuf, String> {
    if let Some(d) = std::env::var_os("CITRIAGE_PG_BIN").filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        return if d.join("initdb").is_file() {
            Ok(d)
        } else {
            Err(format!("CITRIAGE_PG_BIN={}: no initdb there", d.display()))
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            if d.join("initdb").is_file() && d.join("pg_ctl").is_file() {
                return Ok(d);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let v: u32 = e.file_name().to_str()?.parse().ok()?;
                    let bin = e.path().join("bin");
                    bin.join("initdb").is_file().then_some((v, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    versions.pop().map(|(_, b)| b).ok_or_else(|| {
        "no PostgreSQL server programs (initdb, pg_ctl) found: install the `postgresql` package, or set CITRIAGE_PG_BIN"
            .to_string()
    })
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// The uid and gid of a system user, from `/etc/passwd`.
fn user_ids(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&name) && f.len() > 3).then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

/// A URL path segment with `/` and other reserved bytes percent-encoded.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl TempCluster {
    /// Starts a cluster with test settings; the error says why it could not.
    pub fn start() -> Result<TempCluster, String> {
        TempCluster::start_with(&ClusterSettings::default())
    }

    /// Starts a cluster with these settings.
    pub fn start_with(settings: &ClusterSettings) -> Result<TempCluster, String> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let bin = find_bin()?;
        let run_as = if is_root() { Some("postgres".to_string()) } else { None };
        let dir = std::env::temp_dir().join(format!(
            "citriage-pg-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if let Some(user) = &run_as {
            let (uid, gid) = user_ids(user)
                .ok_or_else(|| format!("running as root and there is no `{user}` user to run the server"))?;
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", dir.display()))?;
        }
        let mut c = TempCluster {
            dir,
            bin,
            run_as,
            port: 5432 + (std::process::id() % 1000) as u16,
            watchdog: None,
            databases: AtomicU64::new(0),
        };
        // From here on, dropping `c` stops and removes what was made.
        c.watchdog = c.spawn_watchdog().ok();
        let data = c.dir.join("data");
        c.run(
            "initdb",
            &["-D", &data.to_string_lossy(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
        )?;
        let mut opts = format!(
            "-k {} -c listen_addresses= -p {} -c shared_buffers={} -c max_connections=200",
            c.dir.display(),
            c.port,
            settings.shared_buffers
        );
        opts.push_str(" -c synchronous_commit=off");
        if !settings.durable {
            opts.push_str(" -c fsync=off -c full_page_writes=off");
        }
        let log = c.dir.join("server.log");
        c.run(
            "pg_ctl",
            &["-D", &data.to_string_lossy(), "-l", &log.to_string_lossy(), "-o", &opts, "-w", "-t", "60", "start"],
        )
        .map_err(|e| {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            format!("{e}; server log: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | "))
        })?;
        Ok(c)
    }

    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let out = self
            .command(program)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim().lines().last().unwrap_or("")
            ))
        }
    }

    /// A shell loop that stops the server and removes the folder once this process
    /// is gone, in case it dies without dropping the cluster.
    fn spawn_watchdog(&self) -> std::io::Result<Child> {
        let pg_ctl = self.bin.join("pg_ctl");
        let data = self.dir.join("data");
        let stop = match &self.run_as {
            Some(u) => format!("runuser -u {u} -- '{}' -D '{}' -m immediate stop", pg_ctl.display(), data.display()),
            None => format!("'{}' -D '{}' -m immediate stop", pg_ctl.display(), data.display()),
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf '{dir}'",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }

    /// The folder holding the data, the socket and the server log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The URL of a database of this cluster (over the Unix socket, as `postgres`).
    pub fn url(&self, database: &str) -> String {
        format!("postgresql://postgres@{}:{}/{}", encode(&self.dir.to_string_lossy()), self.port, encode(database))
    }

    /// Creates a new empty database and returns its URL.
    pub fn create_database(&self, prefix: &str) -> Result<String, String> {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        let name = format!("{prefix}_{n}");
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .map_err(|e| format!("connecting to {}: {e}", self.dir.display()))?;
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
        Ok(self.url(&name))
    }

    /// Runs SQL statements (no parameters) on a database of this cluster, as the
    /// superuser: for tests that need to reach past the store's interface.
    pub fn execute(&self, database_url: &str, sql: &str) -> Result<(), String> {
        let mut client = postgres::Client::connect(database_url, postgres::NoTls).map_err(|e| e.to_string())?;
        client.batch_execute(sql).map_err(|e| e.to_string())
    }

    /// Connections open to a database of this cluster (other than the one asking).
    pub fn connections(&self, database_url: &str) -> Result<u64, String> {
        let db = database_url.rsplit('/').next().unwrap_or_default();
        let mut client =
            postgres::Client::connect(&self.url("postgres"), postgres::NoTls).map_err(|e| e.to_string())?;
        let row = client
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", &[&db])
            .map_err(|e| e.to_string())?;
        Ok(row.get::<_, i64>(0).max(0) as u64)
    }

    /// Resident memory of the server's processes right now, in KiB (Linux; `None`
    /// when `/proc` does not tell).
    pub fn server_rss_kib(&self) -> Option<u64> {
        let pid: u32 =
            std::fs::read_to_string(self.dir.join("data/postmaster.pid")).ok()?.lines().next()?.parse().ok()?;
        let mut total = 0;
        let mut stack = vec![pid];
        while let Some(p) = stack.pop() {
            let status = std::fs::read_to_string(format!("/proc/{p}/status")).ok()?;
            total += status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .unwrap_or(0);
            if let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")) {
                stack.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
            }
        }
        Some(total)
    }
}

impl Drop for TempCluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        if data.join("postmaster.pid").exists() {
            let _ = self.run("pg_ctl", &["-D", &data.to_string_lossy(), "-m", "immediate", "-w", "-t", "30", "stop"]);
        }
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        for _ in 0..20 {
            if std::fs::remove_dir_all(&self.dir).is_ok() || !self.dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
