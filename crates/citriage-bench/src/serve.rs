//! `bench serve`: a load test of the dashboard on loopback. It serves a
//! store in-process on a free 127.0.0.1 port and lets N concurrent clients (threads
//! with keep-alive HTTP/1.1 connections that accept gzip, like browsers) request
//! cluster lists with various filters, cluster pages and job pages, picked at random
//! with a fixed seed, until a request count or a time limit is reached. It prints
//! latency percentiles per kind of page, the first request of each URL (answered
//! before any cache had it) apart, errors, throughput and peak memory.
//!
//! The clients share the machine with the server, so they do as little as a load
//! generator can (like `wrk`): they read each response in full, as bytes, without
//! decompressing it.

use crate::rss::{peak_rss_mib, rss_parts};
use crate::{json_line, put, Lines};
use citriage_app::{Error, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one load test is asked to do.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub clients: usize,
    /// Requests in all, at most.
    pub requests: usize,
    /// Seconds in all, at most.
    pub seconds: u64,
    /// URLs per kind of page (cluster pages, job pages) at most.
    pub pages_per_kind: usize,
    /// Let the server render its pages ahead and wait for it before the load (the
    /// server's default); without, every URL's first request renders it.
    pub prewarm: bool,
}

/// The URLs of a load test, by kind: `cluster-list`, `cluster`, `job`.
pub fn pick_urls(view: &citriage_web::index::WebIndex, per_kind: usize) -> Vec<(&'static str, String)> {
    let enc = citriage_web::html::pct;
    let mut urls: Vec<(&'static str, String)> = Vec::new();
    let lists = [
        "/clusters",
        "/clusters?sort=today",
        "/clusters?sort=growth",
        "/clusters?kind=ci",
        "/clusters?kind=pr",
        "/clusters?signature=known",
        "/clusters?job=e2e&exclude_test=Conformance",
        "/clusters?include=timeout&sort=last_seen",
    ];
    urls.extend(lists.iter().map(|u| ("cluster-list", (*u).to_string())));
    for (p, pi) in &view.profiles {
        if p != citriage_patterns::normalize::Profile::Default.name() {
            urls.push(("cluster-list", format!("/clusters?profile={}", enc(p))));
        }
        // The largest clusters, then every k-th of the rest.
        let n = pi.clusters.len();
        let take = per_kind.min(n);
        let step = n.checked_div(take).unwrap_or(1).max(1);
        for c in pi.clusters.iter().step_by(step).take(take) {
            urls.push(("cluster", format!("/clusters/{}/{}", enc(p), enc(&c.stored.stable_id))));
        }
    }
    let n = view.jobs.len();
    let take = per_kind.min(n);
    let step = n.checked_div(take).unwrap_or(1).max(1);
    for j in view.jobs.iter().step_by(step).take(take) {
        urls.push(("job", format!("/jobs/{}", enc(&j.name))));
    }
    urls
}

/// Latency figures of one kind of request, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub kind: String,
    pub requests: usize,
    pub errors: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

fn figures(kind: &str, mut lat: Vec<Duration>, errors: usize) -> Figures {
    lat.sort();
    let q = |p: f64| -> f64 {
        if lat.is_empty() {
            return 0.0;
        }
        let i = ((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1;
        lat[i].as_secs_f64() * 1000.0
    };
    Figures {
        kind: kind.to_string(),
        requests: lat.len(),
        errors,
        p50_ms: q(0.50),
        p90_ms: q(0.90),
        p99_ms: q(0.99),
        max_ms: lat.last().map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0),
    }
}

/// A load test's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub clients: usize,
    pub urls: usize,
    pub requests: usize,
    pub errors: usize,
    /// Error messages (at most ten distinct).
    pub error_samples: Vec<String>,
    pub seconds: f64,
    pub requests_per_second: f64,
    /// All requests, then each kind, then the first request of each URL.
    pub figures: Vec<Figures>,
}

/// Runs a load test against a running server.
pub fn run_load(base: &str, urls: &[(&'static str, String)], spec: &LoadSpec) -> LoadReport {
    let issued = Arc::new(AtomicUsize::new(0));
    let first = Arc::new((0..urls.len()).map(|_| AtomicBool::new(false)).collect::<Vec<_>>());
    let samples = Arc::new(Mutex::new(Vec::<String>::new()));
    let urls = Arc::new(urls.to_vec());
    let deadline = Instant::now() + Duration::from_secs(spec.seconds.max(1));
    let started = Instant::now();
    let handles: Vec<_> = (0..spec.clients.max(1))
        .map(|c| {
            let (issued, first, samples, urls) = (issued.clone(), first.clone(), samples.clone(), urls.clone());
            let base = base.to_string();
            let max = spec.requests;
            std::thread::spawn(move || {
                let mut conn: Option<Conn> = None;
                // xorshift64*, seeded per client: the same test picks the same URLs.
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ (c as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D);
                let mut out: Vec<(usize, Duration, bool, bool)> = Vec::new();
                while issued.fetch_add(1, Ordering::Relaxed) < max && Instant::now() < deadline {
                    x ^= x >> 12;
                    x ^= x << 25;
                    x ^= x >> 27;
                    let i = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % urls.len() as u64) as usize;
                    let cold = !first[i].swap(true, Ordering::Relaxed);
                    let t = Instant::now();
                    let ok = match get(&mut conn, &base, &urls[i].1) {
                        Ok((200, _)) => true,
                        Ok((status, _)) => {
                            note(&samples, format!("{}: status {status}", urls[i].1));
                            false
                        }
                        Err(e) => {
                            conn = None;
                            note(&samples, format!("{}: {e}", urls[i].1));
                            false
                        }
                    };
                    out.push((i, t.elapsed(), ok, cold));
                }
                out
            })
        })
        .collect();
    let mut all: Vec<(usize, Duration, bool, bool)> = Vec::new();
    for h in handles {
        all.extend(h.join().unwrap_or_default());
    }
    let seconds = started.elapsed().as_secs_f64();
    let errors = all.iter().filter(|r| !r.2).count();
    let mut figs = vec![figures("all", all.iter().map(|r| r.1).collect(), errors)];
    // Each kind of page, in the order the URLs name them.
    let mut kinds: Vec<&'static str> = Vec::new();
    for (k, _) in urls.iter() {
        if !kinds.contains(k) {
            kinds.push(k);
        }
    }
    for kind in kinds {
        let mine: Vec<&(usize, Duration, bool, bool)> = all.iter().filter(|r| urls[r.0].0 == kind).collect();
        figs.push(figures(kind, mine.iter().map(|r| r.1).collect(), mine.iter().filter(|r| !r.2).count()));
    }
    let cold: Vec<&(usize, Duration, bool, bool)> = all.iter().filter(|r| r.3).collect();
    figs.push(figures(
        "first request of a URL",
        cold.iter().map(|r| r.1).collect(),
        cold.iter().filter(|r| !r.2).count(),
    ));
    let error_samples = samples.lock().map(|s| s.clone()).unwrap_or_default();
    LoadReport {
        clients: spec.clients,
        urls: urls.len(),
        requests: all.len(),
        errors,
        error_samples,
        seconds,
        requests_per_second: all.len() as f64 / seconds.max(1e-9),
        figures: figs,
    }
}

/// A keep-alive connection.
struct Conn {
    reader: std::io::BufReader<std::net::TcpStream>,
}

/// One GET over a keep-alive connection (opened when there is none); returns the
/// status and the body's length. Reads `Content-Length` and chunked bodies.
fn get(conn: &mut Option<Conn>, base: &str, path: &str) -> std::io::Result<(u16, usize)> {
    use std::io::{BufRead, Read, Write};
    let host = base.trim_start_matches("http://");
    if conn.is_none() {
        let s = std::net::TcpStream::connect(host)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        *conn = Some(Conn { reader: std::io::BufReader::with_capacity(64 * 1024, s) });
    }
    let c = conn.as_mut().expect("a connection");
    write!(c.reader.get_mut(), "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\n\r\n")?;
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut line = String::new();
    c.reader.read_line(&mut line)?;
    let status: u16 =
        line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no status line"))?;
    let (mut length, mut chunked, mut close) = (None, false, false);
    loop {
        line.clear();
        if c.reader.read_line(&mut line)? == 0 {
            return Err(bad("connection closed in the headers"));
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let Some((k, v)) = l.split_once(':') else { continue };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        match k.as_str() {
            "content-length" => length = v.parse::<usize>().ok(),
            "transfer-encoding" => chunked = v.eq_ignore_ascii_case("chunked"),
            "connection" => close = v.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let mut body = 0usize;
    let mut sink = vec![0u8; 64 * 1024];
    let mut take = |r: &mut std::io::BufReader<std::net::TcpStream>, mut n: usize| -> std::io::Result<()> {
        while n > 0 {
            let k = r.read(&mut sink[..n.min(64 * 1024)])?;
            if k == 0 {
                return Err(bad("connection closed in the body"));
            }
            n -= k;
            body += k;
        }
        Ok(())
    };
    if chunked {
        loop {
            line.clear();
            c.reader.read_line(&mut line)?;
            let n = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("chunk size"))?;
            take(&mut c.reader, n)?;
            line.clear();
            c.reader.read_line(&mut line)?;
            if n == 0 {
                break;
            }
        }
    } else if let Some(n) = length {
        take(&mut c.reader, n)?;
    } else if status != 304 && status != 204 {
        return Err(bad("a body of unknown length"));
    }
    if close {
        *conn = None;
    }
    Ok((status, body))
}

fn note(samples: &Mutex<Vec<String>>, msg: String) {
    if let Ok(mut s) = samples.lock() {
        if s.len() < 10 && !s.contains(&msg) {
            s.push(msg);
        }
    }
}

/// A load test's figures and the lines to print.
pub struct Served {
    pub report: LoadReport,
    pub lines: Lines,
}

impl Served {
    /// A load test fails when some requests did.
    pub fn outcome(&self) -> Result<()> {
        if self.report.errors > 0 {
            return Err(Error::failed(format!("{} of {} requests failed", self.report.errors, self.report.requests)));
        }
        Ok(())
    }
}

/// `bench serve`: serves `db` and load-tests it; the lines are the JSON document when `json`.
pub fn serve(db: &Path, spec: &LoadSpec, json: bool) -> Result<Served> {
    let mut out = Lines::new();
    let t = Instant::now();
    let opts = citriage_web::ServeOptions { prewarm: spec.prewarm, ..Default::default() };
    let server =
        citriage_web::Server::bind_with(db.to_path_buf(), "127.0.0.1:0".parse().expect("a socket address"), opts)
            .map_err(|e| match e {
                citriage_web::ServeError::MissingStore(_) | citriage_web::ServeError::Store(_) => {
                    Error::input(e.to_string())
                }
                other => Error::failed(other.to_string()),
            })?;
    let index_time = t.elapsed();
    let view = server.state().view();
    let urls = pick_urls(&view, spec.pages_per_kind);
    let (builds, jobs, entries) = (view.builds.len(), view.jobs.len(), view.search.entries);
    let timings = view.timings.clone();
    let clusters: usize = view.profiles.values().map(|p| p.clusters.len()).sum();
    drop(view);
    if urls.is_empty() {
        return Err(Error::input(format!(
            "{}: nothing to request (no jobs and no clusters)",
            citriage_store::Location::from_path(db)
        )));
    }
    let running = server.spawn().map_err(|e| Error::failed(e.to_string()))?;
    let t = Instant::now();
    if spec.prewarm {
        let deadline = Instant::now() + Duration::from_secs(600);
        while !running.state.prewarmed() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let prewarm_time = t.elapsed();
    let report = run_load(&running.base_url(), &urls, spec);
    running.stop().map_err(|e| Error::failed(e.to_string()))?;
    let rss = peak_rss_mib();
    let (anon, file) = rss_parts();
    if json {
        put!(
            out,
            "{}",
            json_line(&serde_json::json!({
                "store": citriage_store::Location::from_path(db).to_string(), "builds": builds, "jobs": jobs, "clusters": clusters,
                "search_entries": entries, "index_ms": index_time.as_secs_f64() * 1000.0, "peak_rss_mib": rss,
                "prewarm_ms": spec.prewarm.then_some(prewarm_time.as_secs_f64() * 1000.0),
                "rss_anon_mib": anon, "rss_file_mib": file,
                "load": report,
            }))
        );
        return Ok(Served { report, lines: out });
    }
    put!(
        out,
        "bench serve: {} ({builds} builds, {jobs} jobs, {clusters} clusters, {entries} failure texts and excerpts)",
        citriage_store::Location::from_path(db)
    );
    put!(out, "view built in {:.2} s", index_time.as_secs_f64());
    for (what, ms) in &timings {
        put!(out, "  {what:<32} {:>8.2} s", *ms as f64 / 1000.0);
    }
    if spec.prewarm {
        put!(out, "pages rendered ahead in {:.2} s", prewarm_time.as_secs_f64());
    } else {
        put!(out, "no pages rendered ahead: each URL's first request renders it");
    }
    put!(
        out,
        "{} clients, {} URLs, {} requests in {:.1} s = {:.0} req/s, {} errors",
        report.clients,
        report.urls,
        report.requests,
        report.seconds,
        report.requests_per_second,
        report.errors
    );
    put!(
        out,
        "{:<24} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "requests",
        "count",
        "errors",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms"
    );
    for f in &report.figures {
        put!(
            out,
            "{:<24} {:>8} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            f.kind,
            f.requests,
            f.errors,
            f.p50_ms,
            f.p90_ms,
            f.p99_ms,
            f.max_ms
        );
    }
    for e in &report.error_samples {
        put!(out, "error: {e}");
    }
    if let Some(r) = rss {
        put!(
            out,
            "peak RSS {r:.0} MiB (server and clients); now {:.0} MiB anonymous + {:.0} MiB of mapped store file",
            anon.unwrap_or(0.0),
            file.unwrap_or(0.0)
        );
    }
    Ok(Served { report, lines: out })
}
