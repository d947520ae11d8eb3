//! `bench store`: the same synthetic world ingested into a fresh SQLite file
//! and into a fresh PostgreSQL database (a throwaway cluster started here, as the
//! tests start theirs, unless one is given), one process per engine, side by side:
//! builds per minute, the ingesting process's peak RSS (and the PostgreSQL server's),
//! the store's size, the time to cluster the window, the time to build the
//! dashboard's view, and the p50/p99 latency of the dashboard's main pages (overview,
//! jobs list, cluster lists, cluster pages, job pages) under concurrent clients, each
//! process serving its own store in-process on loopback.

use crate::serve::{pick_urls, run_load, LoadSpec};
use crate::{json_line, put, Lines};
use citriage_app::{Error, Progress, Result};
use citriage_store::Location;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `bench store` is asked to do.
#[derive(Debug, Clone)]
pub struct StoreBench {
    pub preset: String,
    pub concurrency: usize,
    /// The world's folder, kept (and reused when already generated); else a temporary one.
    pub world: Option<PathBuf>,
    /// An empty PostgreSQL database; else a throwaway cluster.
    pub postgres: Option<String>,
    /// Cluster the window before serving (cluster pages need it).
    pub cluster: bool,
    /// The dashboard's load: clients, requests, seconds, pages per kind.
    pub load: LoadSpec,
    /// The program each engine's process runs (`citriage`, which runs [`one`] with
    /// `bench store --one STORE`).
    pub program: PathBuf,
}

/// The main pages beside the cluster lists, cluster pages and job pages
/// [`pick_urls`] chooses.
const MAIN_PAGES: [(&str, &str); 3] = [("overview", "/"), ("job-list", "/jobs"), ("drift", "/drift")];

/// One benchmark process: ingest the world's mirror into an empty store, then
/// cluster it and load-test the dashboard over it; returns its figures as JSON (the
/// one line it prints).
pub fn one(world: &Path, store_arg: &str, b: &StoreBench) -> Result<Lines> {
    use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
    use citriage_sources::artifacts::LocalMirror;
    let store = &Location::parse(store_arg);
    let mut st = store.open()?;
    if st.build_counts()?.0 > 0 {
        return Err(Error::input(format!("{store}: not empty; the benchmark needs an empty store")));
    }
    let src = LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).map_err(|e| Error::failed(e.to_string()))?;
    let t = Instant::now();
    let opts = IngestOptions { concurrency: b.concurrency, ..Default::default() };
    let s = ingest_jobs(&src, &mut st, &jobs, &opts, &|_| {})?;
    let secs = t.elapsed().as_secs_f64();
    // The peak so far: the ingest's (clustering and serving come after).
    let rss = crate::rss::peak_rss_mib();
    let mut cluster_secs = None;
    if b.cluster {
        let t = Instant::now();
        let opts = citriage_app::cluster::ClusterOptions::default();
        citriage_app::cluster::cluster_store(&mut st, &opts, &citriage_app::Silent)?;
        cluster_secs = Some(t.elapsed().as_secs_f64());
    }
    let bytes = match store {
        Location::Sqlite(file) => {
            drop(st);
            // The last connection closed: the write-ahead log is checkpointed into the file.
            let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            size(file.clone()) + size(PathBuf::from(format!("{}-wal", file.display())))
        }
        _ => st.size_bytes()?,
    };
    let dashboard = serve_load(PathBuf::from(store_arg), &b.load)?;
    Ok(vec![json_line(&json!({
        "builds": s.builds_stored, "tests": s.tests_stored, "seconds": secs,
        "builds_per_minute": s.builds_stored as f64 / secs.max(1e-9) * 60.0, "peak_rss_mib": rss, "store_bytes": bytes,
        "cluster_seconds": cluster_secs, "dashboard": dashboard,
    }))])
}

/// Serves a store in-process and load-tests its main pages: the view's build time,
/// the time its pages took to be rendered ahead, and each kind of page's figures.
fn serve_load(db: PathBuf, spec: &LoadSpec) -> Result<Value> {
    let t = Instant::now();
    let opts = citriage_web::ServeOptions { prewarm: spec.prewarm, ..Default::default() };
    let server = citriage_web::Server::bind_with(db, "127.0.0.1:0".parse().expect("a socket address"), opts)
        .map_err(|e| Error::failed(e.to_string()))?;
    let view_secs = t.elapsed().as_secs_f64();
    let view = server.state().view();
    let mut urls: Vec<(&'static str, String)> = MAIN_PAGES.iter().map(|(k, u)| (*k, (*u).to_string())).collect();
    urls.extend(pick_urls(&view, spec.pages_per_kind));
    drop(view);
    let running = server.spawn().map_err(|e| Error::failed(e.to_string()))?;
    let t = Instant::now();
    if spec.prewarm {
        let deadline = Instant::now() + Duration::from_secs(1800);
        while !running.state.prewarmed() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let prewarm_secs = t.elapsed().as_secs_f64();
    let report = run_load(&running.base_url(), &urls, spec);
    running.stop().map_err(|e| Error::failed(e.to_string()))?;
    Ok(json!({
        "view_seconds": view_secs,
        "prewarm_seconds": spec.prewarm.then_some(prewarm_secs),
        "load": report,
    }))
}

/// `bench store`: generates (or reuses) the world, then runs one process per engine;
/// returns their figures side by side (the JSON document when `json_out`). What it
/// does goes to `progress` as notes.
pub fn run(b: &StoreBench, json_out: bool, progress: &dyn Progress) -> Result<Lines> {
    let Some(params) = citriage_synth::SynthParams::preset(&b.preset) else {
        return Err(Error::input(format!("unknown preset {:?} (tiny, demo, k8s)", b.preset)));
    };
    let tmp = std::env::temp_dir().join(format!("citriage-bench-store-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| Error::failed(format!("{}: {e}", tmp.display())))?;
    let dir = b.world.clone().unwrap_or_else(|| tmp.join("world"));
    if !dir.join("truth.json").exists() {
        progress.note(&format!("generating the {} world in {}", b.preset, dir.display()));
        citriage_synth::generate(&params, &dir, &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?;
    }
    #[cfg(feature = "postgres")]
    let mut cluster = None;
    // (Without the postgres feature the match below is an `Option::map`.)
    #[allow(clippy::manual_map)]
    let pg_url = match &b.postgres {
        Some(u) => Some(u.to_string()),
        None => {
            #[cfg(feature = "postgres")]
            {
                let settings = citriage_store::pg_cluster::ClusterSettings { durable: true, ..Default::default() };
                let c = citriage_store::pg_cluster::TempCluster::start_with(&settings)
                    .map_err(|e| Error::failed(format!("starting a throwaway PostgreSQL cluster: {e}")))?;
                let url = c.create_database("bench").map_err(Error::failed)?;
                cluster = Some(c);
                Some(url)
            }
            #[cfg(not(feature = "postgres"))]
            None
        }
    };
    let exe = &b.program;
    let mut results = Vec::new();
    let mut stores = vec![("sqlite", tmp.join("bench.db").display().to_string())];
    stores.extend(pg_url.map(|u| ("postgres", u)));
    for (name, store) in &stores {
        progress.note(&format!("ingesting into {name}, then clustering and serving it"));
        let mut cmd = std::process::Command::new(exe);
        cmd.args(["--quiet", "bench", "store", "--concurrency", &b.concurrency.to_string(), "--world"])
            .arg(&dir)
            .args(["--clients", &b.load.clients.to_string(), "--requests", &b.load.requests.to_string()])
            .args(["--seconds", &b.load.seconds.to_string(), "--pages", &b.load.pages_per_kind.to_string()])
            .args(["--one", store]);
        if !b.cluster {
            cmd.arg("--no-cluster");
        }
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| Error::failed(e.to_string()))?;
        // Its stderr is read as it comes (a full pipe would stop the process).
        let err_pipe = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = err_pipe {
                let _ = std::io::Read::read_to_string(&mut p, &mut text);
            }
            text
        });
        // The server's memory, sampled while it works (a cluster started here only).
        #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
        let mut server_kib = 0u64;
        while child.try_wait().map_err(|e| Error::failed(e.to_string()))?.is_none() {
            #[cfg(feature = "postgres")]
            if *name == "postgres" {
                server_kib = server_kib.max(cluster.as_ref().and_then(|c| c.server_rss_kib()).unwrap_or(0));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let out = child.wait_with_output().map_err(|e| Error::failed(e.to_string()))?;
        let err = err_reader.join().unwrap_or_default();
        if !out.status.success() {
            return Err(Error::failed(format!("the {name} benchmark failed: {}", err.trim())));
        }
        let mut v: Value = serde_json::from_slice(&out.stdout).map_err(|e| Error::failed(format!("{name}: {e}")))?;
        v["backend"] = json!(name);
        if server_kib > 0 {
            v["server_peak_rss_mib"] = json!(server_kib as f64 / 1024.0);
        }
        results.push(v);
    }
    // The stores (and the world, unless it was given with --world) go.
    let _ = std::fs::remove_dir_all(&tmp);
    if json_out {
        return Ok(vec![json_line(&json!({ "preset": b.preset, "concurrency": b.concurrency, "results": results }))]);
    }
    Ok(side_by_side(b, &results))
}

fn side_by_side(b: &StoreBench, results: &[Value]) -> Lines {
    let mut out = Lines::new();
    let col = |f: &dyn Fn(&Value) -> String| -> String {
        results.iter().map(|r| format!("{:>22}", f(r))).collect::<Vec<_>>().join("")
    };
    put!(
        out,
        "bench store: preset {}, ingest concurrency {}; dashboard: {} clients, at most {} requests or {} s",
        b.preset,
        b.concurrency,
        b.load.clients,
        b.load.requests,
        b.load.seconds
    );
    put!(out, "{:<34}{}", "", col(&|r| r["backend"].as_str().unwrap_or("").to_string()));
    put!(out, "{:<34}{}", "builds stored", col(&|r| r["builds"].as_u64().unwrap_or(0).to_string()));
    put!(out, "{:<34}{}", "test results stored", col(&|r| r["tests"].as_u64().unwrap_or(0).to_string()));
    put!(out, "{:<34}{}", "ingest seconds", col(&|r| format!("{:.1}", r["seconds"].as_f64().unwrap_or(0.0))));
    put!(out, "{:<34}{}", "builds/min", col(&|r| format!("{:.0}", r["builds_per_minute"].as_f64().unwrap_or(0.0))));
    put!(
        out,
        "{:<34}{}",
        "peak RSS of the ingest (MiB)",
        col(&|r| {
            let server = r["server_peak_rss_mib"].as_f64().map(|m| format!(" +{m:.0} server")).unwrap_or_default();
            format!("{:.0}{server}", r["peak_rss_mib"].as_f64().unwrap_or(0.0))
        })
    );
    put!(
        out,
        "{:<34}{}",
        "store size",
        col(&|r| citriage_app::store_admin::human_bytes(r["store_bytes"].as_u64().unwrap_or(0)))
    );
    put!(
        out,
        "{:<34}{}",
        "clustering the window (s)",
        col(&|r| r["cluster_seconds"].as_f64().map(|s| format!("{s:.1}")).unwrap_or_else(|| "-".into()))
    );
    put!(
        out,
        "{:<34}{}",
        "dashboard view built (s)",
        col(&|r| format!("{:.1}", r["dashboard"]["view_seconds"].as_f64().unwrap_or(0.0)))
    );
    put!(
        out,
        "{:<34}{}",
        "pages rendered ahead (s)",
        col(&|r| {
            r["dashboard"]["prewarm_seconds"].as_f64().map(|s| format!("{s:.1}")).unwrap_or_else(|| "-".into())
        })
    );
    put!(
        out,
        "{:<34}{}",
        "requests / errors / req/s",
        col(&|r| {
            let l = &r["dashboard"]["load"];
            format!(
                "{} / {} / {:.0}",
                l["requests"].as_u64().unwrap_or(0),
                l["errors"].as_u64().unwrap_or(0),
                l["requests_per_second"].as_f64().unwrap_or(0.0)
            )
        })
    );
    // Each kind of page, p50 / p99 in milliseconds.
    let mut kinds: Vec<String> = Vec::new();
    for r in results {
        for f in r["dashboard"]["load"]["figures"].as_array().into_iter().flatten() {
            let k = f["kind"].as_str().unwrap_or("").to_string();
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    for k in kinds {
        put!(
            out,
            "{:<34}{}",
            format!("{k}: p50 / p99 ms"),
            col(&|r| {
                let f = r["dashboard"]["load"]["figures"]
                    .as_array()
                    .and_then(|a| a.iter().find(|f| f["kind"] == k.as_str()).cloned())
                    .unwrap_or_default();
                match f["requests"].as_u64() {
                    Some(n) if n > 0 => {
                        format!(
                            "{:.1} / {:.1}",
                            f["p50_ms"].as_f64().unwrap_or(0.0),
                            f["p99_ms"].as_f64().unwrap_or(0.0)
                        )
                    }
                    _ => "-".into(),
                }
            })
        );
    }
    out
}
