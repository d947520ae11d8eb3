//! `bench pr`: "did my PR break this?" against the planted pull requests of synthetic
//! worlds (`pr_stories`). For each seed it generates a world, fetches its mirror into
//! a SQLite store, clusters the window's failures as `citriage cluster` does, serves
//! the world's recorded GitHub answers on 127.0.0.1 (laid out like the API: a PR and
//! its changed files), and runs `citriage pr` on every planted PR. It prints, per class,
//! precision and recall over the planted PRs' failures, the verdicts, and the count that
//! matters most: PRs called safe to /retest that broke a test (must be 0). Seeds used
//! while the rules were written (held-in) and seeds never looked at (held-out) are
//! printed apart.

use crate::{json_line, put, Lines};
use citriage_analysis::pr_risk::Class;
use citriage_app::pr::{analyse, PrOptions, PrTarget};
use citriage_app::records::GithubAccess;
use citriage_app::{Error, Progress, Result, Silent};
use citriage_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Seeds the rules were written against.
pub const HELD_IN: &[u64] = &[1, 2, 3];
/// Seeds never looked at while writing them.
pub const HELD_OUT: &[u64] = &[101, 102, 103, 104];

/// What `bench pr` is asked.
#[derive(Debug, Clone)]
pub struct PrBenchOptions {
    pub preset: String,
    pub held_in: Vec<u64>,
    pub held_out: Vec<u64>,
    /// Jobs of each world besides the stories' own (default: the preset's).
    pub jobs: Option<usize>,
    /// Keep the worlds and stores here (default: a temporary folder, removed).
    pub keep: Option<PathBuf>,
}

impl Default for PrBenchOptions {
    fn default() -> Self {
        PrBenchOptions {
            preset: "tiny".into(),
            held_in: HELD_IN.to_vec(),
            held_out: HELD_OUT.to_vec(),
            jobs: None,
            keep: None,
        }
    }
}

/// Counts of one class over failures: true positives, predicted, actual.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ClassCount {
    pub tp: u64,
    pub predicted: u64,
    pub actual: u64,
}

impl ClassCount {
    pub fn precision(&self) -> Option<f64> {
        (self.predicted > 0).then(|| self.tp as f64 / self.predicted as f64)
    }
    pub fn recall(&self) -> Option<f64> {
        (self.actual > 0).then(|| self.tp as f64 / self.actual as f64)
    }
}

/// The figures of a set of seeds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    pub seeds: Vec<u64>,
    pub prs: u64,
    pub prs_that_broke_a_test: u64,
    /// PRs called "safe to /retest" that broke a test: must be 0.
    pub safe_but_broke: u64,
    /// PRs that broke nothing and were called safe.
    pub safe_and_clean: u64,
    pub clean_prs: u64,
    /// Failures of the truth the analysis did not list, and listed failures the truth lacks.
    pub missing: u64,
    pub unexpected: u64,
    /// Failures rightly called new with this PR on strong evidence (a changed file named).
    pub new_strong: u64,
    pub classes: BTreeMap<String, ClassCount>,
    /// (seed, PR, job, test, truth, called) of each wrong class.
    pub wrong: Vec<(u64, String, String, String, String, String)>,
}

/// Both sets.
#[derive(Debug, Clone, Serialize)]
pub struct PrBench {
    pub preset: String,
    pub held_in: Figures,
    pub held_out: Figures,
}

/// Runs the benchmark.
pub fn run(o: &PrBenchOptions, progress: &dyn Progress) -> Result<PrBench> {
    let tmp = std::env::temp_dir().join(format!("citriage-bench-pr-{}", std::process::id()));
    let dir = o.keep.clone().unwrap_or_else(|| tmp.clone());
    let result = (|| {
        let held_in = figures(o, &o.held_in, &dir, progress)?;
        let held_out = figures(o, &o.held_out, &dir, progress)?;
        Ok(PrBench { preset: o.preset.clone(), held_in, held_out })
    })();
    if o.keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn figures(o: &PrBenchOptions, seeds: &[u64], dir: &Path, progress: &dyn Progress) -> Result<Figures> {
    let mut f = Figures { seeds: seeds.to_vec(), ..Figures::default() };
    for c in Class::ALL {
        f.classes.insert(c.as_str().to_string(), ClassCount::default());
    }
    for seed in seeds {
        progress.doing(&format!("seed {seed}: generating and fetching the world"));
        let world = dir.join(format!("world-{seed}"));
        let _ = std::fs::remove_dir_all(&world);
        score_world(o, *seed, &world, &mut f, progress)?;
    }
    Ok(f)
}

/// One world generated, stored, clustered and every planted PR scored into `f`.
pub fn score_world(
    o: &PrBenchOptions,
    seed: u64,
    world: &Path,
    f: &mut Figures,
    progress: &dyn Progress,
) -> Result<()> {
    let mut p = citriage_synth::SynthParams::preset(&o.preset).ok_or_else(|| {
        Error::input(format!("--preset {:?}: expected one of {:?}", o.preset, citriage_synth::PRESETS))
    })?;
    p.seed = seed;
    p.payloads = 0;
    if let Some(j) = o.jobs {
        p.jobs = j.max(1);
    }
    p.pr_stories = true;
    citriage_synth::generate(&p, &world.join("w"), &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?;
    let root = world.join("w");
    let mut store = Store::open(&world.join("store.db"))?;
    let req = citriage_app::fetch::FetchRequest {
        mirror: Some(root.join("gcs/kubernetes-ci-logs")),
        all: true,
        ..Default::default()
    };
    let src = citriage_app::fetch::source(&req)?;
    citriage_app::fetch::fetch(&mut store, src.as_ref(), &req, &Silent)?;
    let copts = citriage_app::cluster::ClusterOptions { window_days: 14, ..Default::default() };
    citriage_app::cluster::cluster_store(&mut store, &copts, &Silent)?;
    let gh = RecordedGithub::start(&root.join("github/api"))?;
    let truth: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("truth/prs.json")).map_err(|e| Error::failed(format!("truth/prs.json: {e}")))?,
    )
    .map_err(|e| Error::failed(format!("truth/prs.json: {e}")))?;
    let opts =
        PrOptions { github: Some(GithubAccess { api: gh.base.clone(), offline: false }), ..PrOptions::default() };
    for pr in truth["prs"].as_array().into_iter().flatten() {
        let name = pr["pr"].as_str().unwrap_or_default();
        progress.doing(&format!("seed {seed}: {name}"));
        let target = PrTarget::parse(name)?;
        let risk = analyse(&mut store, &target, &opts, &Silent)?;
        score_pr(seed, pr, &risk, f);
    }
    Ok(())
}

fn score_pr(seed: u64, pr: &serde_json::Value, risk: &citriage_app::pr::PrRisk, f: &mut Figures) {
    let broke = pr["broke_test"].as_bool().unwrap_or(false);
    f.prs += 1;
    if broke {
        f.prs_that_broke_a_test += 1;
        f.safe_but_broke += u64::from(risk.verdict.safe_to_retest);
    } else {
        f.clean_prs += 1;
        f.safe_and_clean += u64::from(risk.verdict.safe_to_retest);
    }
    let strong: std::collections::BTreeSet<(String, String)> =
        risk.failures.iter().filter(|x| x.strong).map(|x| (x.job.clone(), x.test.clone())).collect();
    let mut called: BTreeMap<(String, String), Class> =
        risk.failures.iter().map(|x| ((x.job.clone(), x.test.clone()), x.class)).collect();
    for t in pr["failures"].as_array().into_iter().flatten() {
        let key = (t["job"].as_str().unwrap_or("").to_string(), t["test"].as_str().unwrap_or("").to_string());
        let Some(want) = t["class"].as_str().and_then(Class::parse) else { continue };
        if let Some(c) = f.classes.get_mut(want.as_str()) {
            c.actual += 1;
        }
        match called.remove(&key) {
            Some(got) => {
                if let Some(c) = f.classes.get_mut(got.as_str()) {
                    c.predicted += 1;
                    c.tp += u64::from(got == want);
                }
                if got == want && got == Class::NewWithPr && strong.contains(&key) {
                    f.new_strong += 1;
                }
                if got != want {
                    let name = pr["pr"].as_str().unwrap_or("").to_string();
                    f.wrong.push((seed, name, key.0, key.1, want.as_str().into(), got.as_str().into()));
                }
            }
            None => f.missing += 1,
        }
    }
    for (_, got) in called {
        f.unexpected += 1;
        if let Some(c) = f.classes.get_mut(got.as_str()) {
            c.predicted += 1;
        }
    }
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "-".into())
}

/// The lines `bench pr` prints.
pub fn lines(r: &PrBench, json: bool) -> Lines {
    let mut out = Lines::new();
    if json {
        out.push(json_line(&serde_json::to_value(r).unwrap_or_default()));
        return out;
    }
    put!(out, "bench pr: planted pull requests of synthetic worlds (preset {})", r.preset);
    for (name, f) in [("held-in", &r.held_in), ("held-out", &r.held_out)] {
        put!(out);
        put!(out, "{name} seeds {:?}: {} PRs ({} broke a test)", f.seeds, f.prs, f.prs_that_broke_a_test);
        put!(out, "  PRs called safe to /retest that broke a test: {} (must be 0)", f.safe_but_broke);
        put!(out, "  PRs that broke nothing called safe: {} of {}", f.safe_and_clean, f.clean_prs);
        put!(out, "  failures missing from the analysis: {}; listed but not planted: {}", f.missing, f.unexpected);
        let new = f.classes.get(Class::NewWithPr.as_str()).map_or(0, |c| c.tp);
        put!(out, "  new with this PR on a changed file the failure names: {} of {}", f.new_strong, new);
        put!(
            out,
            "  {:<20} {:>9} {:>9} {:>6} {:>9} {:>6}",
            "class",
            "precision",
            "recall",
            "tp",
            "predicted",
            "actual"
        );
        for (c, n) in &f.classes {
            put!(
                out,
                "  {:<20} {:>9} {:>9} {:>6} {:>9} {:>6}",
                c,
                pct(n.precision()),
                pct(n.recall()),
                n.tp,
                n.predicted,
                n.actual
            );
        }
        for w in f.wrong.iter().take(10) {
            put!(out, "  wrong: seed {} {} {} :: {}: truth {}, called {}", w.0, w.1, w.2, w.3, w.4, w.5);
        }
    }
    out
}

/// The world's recorded GitHub answers served on 127.0.0.1, laid out like the API:
/// `/repos/O/R/pulls/N` and `/repos/O/R/pulls/N/files` (from `pulls-files/N`); 404
/// for anything else.
pub struct RecordedGithub {
    pub base: String,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RecordedGithub {
    pub fn start(api_root: &Path) -> Result<RecordedGithub> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| Error::failed(format!("127.0.0.1: {e}")))?;
        let addr = listener.local_addr().map_err(|e| Error::failed(e.to_string()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, root) = (stop.clone(), api_root.to_path_buf());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(c) = conn {
                    let _ = answer(c, &root);
                }
            }
        });
        Ok(RecordedGithub { base: format!("http://{addr}"), stop, addr, thread: Some(thread) })
    }
}

impl Drop for RecordedGithub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The file that answers `path`, if any.
fn file_for(root: &Path, path: &str) -> Option<PathBuf> {
    let rest = path.strip_prefix("/repos/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains('\\')) {
        return None;
    }
    let rel = match parts.as_slice() {
        [o, r, "pulls", n, "files"] => format!("repos/{o}/{r}/pulls-files/{n}"),
        [o, r, "pulls", n] => format!("repos/{o}/{r}/pulls/{n}"),
        _ => return None,
    };
    Some(root.join(rel)).filter(|p| p.is_file())
}

fn answer(mut c: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(c.try_clone()?);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let target = first.split_whitespace().nth(1).unwrap_or("");
    let path = target.split('?').next().unwrap_or("");
    let (status, body) = match file_for(root, path).and_then(|p| std::fs::read(p).ok()) {
        Some(b) => ("200 OK", b),
        None => ("404 Not Found", br#"{"message":"Not Found"}"#.to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes())?;
    c.write_all(&body)?;
    c.flush()
}
