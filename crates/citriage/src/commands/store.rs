//! `citriage store`: look at a store (engine, schema, rows, size, content digest),
//! copy one into another (a SQLite file into PostgreSQL, or back), and benchmark
//! ingestion into both engines side by side.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_store::Location;
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Inspect the store, copy it to another engine (SQLite file ⇄ PostgreSQL), and
/// benchmark ingestion on both engines.
#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub what: StoreWhat,
}

#[derive(Subcommand, Debug)]
pub enum StoreWhat {
    /// The store (--db): its engine, location (password hidden), schema version, rows
    /// per table and bytes on disk.
    Info {
        /// Also a content digest of everything stored, which leaves out row ids and
        /// import times: two stores with the same content have the same digest, on
        /// either engine (reads the whole store).
        #[arg(long)]
        digest: bool,
    },
    /// Copy every row of a store into a new, empty one: e.g. an existing SQLite file
    /// into PostgreSQL (`--from sqlite:FILE --to postgres://USER@HOST/DB`). The
    /// source is only read (its schema is brought up to date first); the copy is one
    /// transaction of the target, so a failed copy leaves it empty; afterwards both
    /// stores' content digests are compared.
    Migrate {
        /// The store to copy (a SQLite file, sqlite:FILE, or postgres://…).
        /// Default: the store (--db).
        #[arg(long, value_name = "FILE|URL")]
        from: Option<String>,
        /// The store to fill; it must be empty (a new file, or a new database).
        #[arg(long, value_name = "FILE|URL")]
        to: String,
        /// Skip comparing the two stores' content digests after the copy (each reads
        /// its whole store).
        #[arg(long)]
        no_verify: bool,
    },
    /// Generate a synthetic world and ingest it from its local mirror into a fresh
    /// SQLite file and a fresh PostgreSQL database, one process each: builds per
    /// minute, the ingesting process's peak RSS (and the PostgreSQL server's, when it
    /// runs here), and the store's size, side by side.
    Bench {
        /// Synthetic world preset (tiny, demo, k8s).
        #[arg(long, default_value = "demo")]
        preset: String,
        /// Builds fetched at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Keep the generated world here (reused when it is already there) instead
        /// of a temporary folder.
        /// Default: none.
        #[arg(long, value_name = "DIR")]
        world: Option<PathBuf>,
        /// An empty PostgreSQL database to ingest into. Default: a throwaway cluster
        /// started for the benchmark (the server programs must be installed).
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// Ingest into this store only and print its figures as JSON (what each
        /// benchmark process runs).
        /// Default: both engines.
        #[arg(long, value_name = "FILE|URL", hide = true)]
        one: Option<String>,
    },
}

/// Runs `citriage store`.
pub fn exec(ctx: &Context, a: &StoreArgs) -> Result<(), Failure> {
    match &a.what {
        StoreWhat::Info { digest } => info(ctx, *digest),
        StoreWhat::Migrate { from, to, no_verify } => {
            let from = from.as_deref().map(Location::parse).unwrap_or_else(|| ctx.db_location());
            migrate(ctx, &from, &Location::parse(to), !*no_verify)
        }
        StoreWhat::Bench { preset, concurrency, world, postgres, one } => match one {
            Some(store) => bench_one(world.as_deref(), &Location::parse(store), *concurrency),
            None => bench(ctx, preset, *concurrency, world.as_deref(), postgres.as_deref()),
        },
    }
}

fn info(ctx: &Context, digest: bool) -> Result<(), Failure> {
    let loc = ctx.db_location();
    if !loc.exists() {
        return Err(Failure::input(format!("{loc}: no store there")));
    }
    let store = loc.open()?;
    let pb = ctx.spinner(if digest { "reading the whole store" } else { "counting rows" });
    let info = store.info(digest)?;
    pb.finish_and_clear();
    if ctx.json() {
        print_json(&serde_json::to_value(&info).unwrap_or_default());
        return Ok(());
    }
    outln!("store:   {} ({})", info.location, info.backend);
    outln!("schema:  version {}", info.schema_version);
    outln!("size:    {}", human_bytes(info.bytes));
    for t in &info.tables {
        outln!("  {:<22} {:>12} rows", t.table, t.rows);
    }
    if let Some(d) = &info.digest {
        outln!("digest:  {d}");
    }
    Ok(())
}

fn human_bytes(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.2} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    }
}

fn migrate(ctx: &Context, from: &Location, to: &Location, verify: bool) -> Result<(), Failure> {
    if !from.exists() {
        return Err(Failure::input(format!("--from {from}: no store there")));
    }
    if from == to {
        return Err(Failure::input(format!("--from and --to are the same store ({from})")));
    }
    let source = from.open()?;
    let mut target = to.open()?;
    let started = Instant::now();
    let pb = ctx.spinner(&format!("copying {from} into {to}"));
    let report = source
        .copy_into(&mut target, &mut |table, rows| pb.set_message(format!("copying {table}: {rows} rows")))
        .map_err(Failure::from)?;
    pb.finish_and_clear();
    let copy_s = started.elapsed().as_secs_f64();
    let verified = if verify {
        let pb = ctx.spinner("comparing the stores' content digests");
        let (a, b) = (source.content_digest()?, target.content_digest()?);
        pb.finish_and_clear();
        if a != b {
            return Err(Failure::other(format!(
                "the copy in {to} differs from {from} (digest {b} against {a}); the target keeps the copy for inspection"
            )));
        }
        Some(a)
    } else {
        None
    };
    if ctx.json() {
        print_json(&json!({
            "from": report.from, "to": report.to, "tables": report.tables, "seconds": copy_s, "digest": verified,
        }));
        return Ok(());
    }
    let rows: u64 = report.tables.iter().map(|t| t.rows).sum();
    outln!(
        "copied {rows} rows in {} tables from {} into {} in {copy_s:.1} s",
        report.tables.len(),
        report.from,
        report.to
    );
    for t in report.tables.iter().filter(|t| t.rows > 0) {
        outln!("  {:<22} {:>12} rows", t.table, t.rows);
    }
    match verified {
        Some(d) => outln!("same content on both sides (digest {d})"),
        None => outln!("not verified (--no-verify)"),
    }
    Ok(())
}

/// The ingest of one benchmark process.
fn bench_one(world: Option<&Path>, store: &Location, concurrency: usize) -> Result<(), Failure> {
    use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
    use citriage_sources::artifacts::LocalMirror;
    let world = world.ok_or_else(|| Failure::input("--one needs --world"))?;
    let mut st = store.open()?;
    if st.build_counts()?.0 > 0 {
        return Err(Failure::input(format!("{store}: not empty; the benchmark needs an empty store")));
    }
    let src = LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).map_err(|e| Failure::other(e.to_string()))?;
    let t = Instant::now();
    let s = ingest_jobs(&src, &mut st, &jobs, &IngestOptions { concurrency, ..Default::default() }, &|_| {})
        .map_err(|e| Failure::other(e.to_string()))?;
    let secs = t.elapsed().as_secs_f64();
    let rss = crate::bench::peak_rss_mib();
    let bytes = match store {
        Location::Sqlite(file) => {
            drop(st);
            // The last connection closed: the write-ahead log is checkpointed into the file.
            let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            size(file.clone()) + size(PathBuf::from(format!("{}-wal", file.display())))
        }
        _ => st.size_bytes()?,
    };
    print_json(&json!({
        "builds": s.builds_stored, "tests": s.tests_stored, "seconds": secs,
        "builds_per_minute": s.builds_stored as f64 / secs.max(1e-9) * 60.0, "peak_rss_mib": rss, "store_bytes": bytes,
    }));
    Ok(())
}

fn bench(
    ctx: &Context,
    preset: &str,
    concurrency: usize,
    world: Option<&Path>,
    postgres: Option<&str>,
) -> Result<(), Failure> {
    let Some(params) = citriage_synth::SynthParams::preset(preset) else {
        return Err(Failure::input(format!("unknown preset {preset:?}")));
    };
    let tmp = tempdir_for("citriage-store-bench")?;
    let dir = world.map(Path::to_path_buf).unwrap_or_else(|| tmp.join("world"));
    if !dir.join("truth.json").exists() {
        let pb = ctx.spinner(&format!("generating the {preset} world"));
        citriage_synth::generate(&params, &dir, &mut |_| {}).map_err(|e| Failure::other(e.to_string()))?;
        pb.finish_and_clear();
    }
    #[cfg(feature = "postgres")]
    let mut cluster = None;
    // (Without the postgres feature the match below is an `Option::map`.)
    #[allow(clippy::manual_map)]
    let pg_url = match postgres {
        Some(u) => Some(u.to_string()),
        None => {
            #[cfg(feature = "postgres")]
            {
                let settings = citriage_store::pg_cluster::ClusterSettings { durable: true, ..Default::default() };
                let c = citriage_store::pg_cluster::TempCluster::start_with(&settings)
                    .map_err(|e| Failure::other(format!("starting a throwaway PostgreSQL cluster: {e}")))?;
                let url = c.create_database("bench").map_err(Failure::other)?;
                cluster = Some(c);
                Some(url)
            }
            #[cfg(not(feature = "postgres"))]
            None
        }
    };
    let exe = std::env::current_exe().map_err(|e| Failure::other(e.to_string()))?;
    let mut results = Vec::new();
    let mut stores = vec![("sqlite", tmp.join("bench.db").display().to_string())];
    stores.extend(pg_url.map(|u| ("postgres", u)));
    for (name, store) in &stores {
        let pb = ctx.spinner(&format!("ingesting into {name}"));
        let mut child = std::process::Command::new(&exe)
            .args(["store", "bench", "--concurrency", &concurrency.to_string(), "--world"])
            .arg(&dir)
            .args(["--one", store])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| Failure::other(e.to_string()))?;
        // The server's memory, sampled while it works (a cluster started here only).
        #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
        let mut server_kib = 0u64;
        while child.try_wait().map_err(|e| Failure::other(e.to_string()))?.is_none() {
            #[cfg(feature = "postgres")]
            if *name == "postgres" {
                server_kib = server_kib.max(cluster.as_ref().and_then(|c| c.server_rss_kib()).unwrap_or(0));
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let out = child.wait_with_output().map_err(|e| Failure::other(e.to_string()))?;
        pb.finish_and_clear();
        if !out.status.success() {
            return Err(Failure::other(format!(
                "ingesting into {name} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let mut v: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|e| Failure::other(format!("{name}: {e}")))?;
        v["backend"] = json!(name);
        if server_kib > 0 {
            v["server_peak_rss_mib"] = json!(server_kib as f64 / 1024.0);
        }
        results.push(v);
    }
    // The stores (and the world, unless it was given with --world) go.
    let _ = std::fs::remove_dir_all(&tmp);
    if ctx.json() {
        print_json(&json!({ "preset": preset, "concurrency": concurrency, "results": results }));
        return Ok(());
    }
    outln!("store bench: preset {preset}, concurrency {concurrency}");
    outln!(
        "{:<10} {:>9} {:>11} {:>9} {:>12} {:>16} {:>12}",
        "backend",
        "builds",
        "tests",
        "seconds",
        "builds/min",
        "peak RSS (MiB)",
        "store"
    );
    for r in &results {
        let server = r["server_peak_rss_mib"].as_f64().map(|m| format!(" +{m:.0} server")).unwrap_or_default();
        outln!(
            "{:<10} {:>9} {:>11} {:>9.1} {:>12.0} {:>16} {:>12}",
            r["backend"].as_str().unwrap_or(""),
            r["builds"].as_u64().unwrap_or(0),
            r["tests"].as_u64().unwrap_or(0),
            r["seconds"].as_f64().unwrap_or(0.0),
            r["builds_per_minute"].as_f64().unwrap_or(0.0),
            format!("{:.0}{server}", r["peak_rss_mib"].as_f64().unwrap_or(0.0)),
            human_bytes(r["store_bytes"].as_u64().unwrap_or(0)),
        );
    }
    Ok(())
}

fn tempdir_for(prefix: &str) -> Result<PathBuf, Failure> {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::other(format!("{}: {e}", dir.display())))?;
    Ok(dir)
}
