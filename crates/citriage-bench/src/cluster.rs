//! `bench cluster`: `citriage cluster` end to end (the store read, the clustering, the
//! store write and the exports), as users run it, beside go.k8s.io/triage's Python
//! reference on the same failures. The failures are the clustering benchmark's
//! generated input (`citriage_patterns::benchgen`: planted patterns, near-duplicates,
//! UUIDs, timestamps), written both into a fresh store (one build per generated build,
//! its failed tests with their texts) and as the reference reads them (`builds.json`, a
//! JSON list, and `tests.json`, one failed test per line). Each run is a child process
//! measured by the kernel's accounting (wall, CPU, peak RSS): `cluster` once per
//! profile on a fresh store and once more on the same store (stable ids carried, the
//! membership written as a difference), and, with `--reference`, `python3
//! CHECKOUT/triage/summarize.py builds.json tests.json` (kubernetes/test-infra at the
//! parent of commit 8bd0b7a55c, its last Python version).

use crate::scale::{measure, measure_with, Cost, RunLimits};
use crate::{json_line, put, Lines};
use citriage_app::{Error, Progress, Result};
use citriage_model::build::{BuildRecord, StoredTest};
use citriage_model::time::HOUR;
use citriage_patterns::benchgen::{generate_each, GenBuild};
use serde_json::json;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// What `bench cluster` is asked to do.
#[derive(Debug, Clone)]
pub struct ClusterBench {
    pub failures: usize,
    pub seed: u64,
    /// Profiles run (`default`, `k8s-triage`).
    pub profiles: Vec<String>,
    /// A kubernetes/test-infra checkout with `triage/summarize.py` and
    /// `triage/berghelroach.py` (its Python reference); none: citriage alone.
    pub reference: Option<PathBuf>,
    /// The reference is stopped after this long (its figures are then lower bounds
    /// and the speedups "at least"); none: waited for to the end.
    pub reference_limit: Option<std::time::Duration>,
    /// The store `cluster` reads (a SQLite file is made in `dir` by default; a
    /// PostgreSQL URL names an empty database).
    pub store: Option<String>,
    /// Where the input, stores and outputs go (kept); else a temporary folder.
    pub dir: Option<PathBuf>,
    /// The program run (`citriage`).
    pub program: PathBuf,
}

fn io(p: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::failed(format!("{}: {e}", p.display()))
}

/// Writes the generated failures into `store` and as the reference's input files in
/// `dir`; returns the number of builds. Each build is stored as soon as its last failure
/// is made and `builds.json` is written one build at a time: this process stays small,
/// which the measured children's peaks depend on (a child starts as a copy of this
/// process, and the kernel counts that copy in the child's peak).
fn write_input(b: &ClusterBench, store: &str, dir: &Path) -> Result<usize> {
    let tests_path = dir.join("tests.json");
    let mut tests = BufWriter::new(std::fs::File::create(&tests_path).map_err(io(&tests_path))?);
    let mut st = citriage_store::Location::parse(store).open()?;
    if st.build_counts()?.0 > 0 {
        return Err(Error::input(format!("{store}: not empty; the benchmark needs an empty store")));
    }
    // The build being filled: (its index, the build, its failed tests).
    let mut open: Option<(u32, GenBuild, Vec<StoredTest>)> = None;
    let mut err: Option<Error> = None;
    let builds = generate_each(b.failures, b.seed, |gb, f| {
        if err.is_some() {
            return;
        }
        let row = json!({"name": f.test, "build": gb.path, "started": gb.started, "failure_text": f.text});
        if let Err(e) =
            serde_json::to_writer(&mut tests, &row).map_err(std::io::Error::other).and_then(|_| tests.write_all(b"\n"))
        {
            err = Some(io(&tests_path)(e));
            return;
        }
        if open.as_ref().is_some_and(|(i, _, _)| *i != f.build) {
            if let Some((_, g, t)) = open.take() {
                if let Err(e) = st.put_build(&bench_build(&g, t)) {
                    err = Some(e.into());
                    return;
                }
            }
        }
        let (_, _, t) = open.get_or_insert_with(|| (f.build, gb.clone(), Vec::new()));
        t.push(StoredTest {
            file: String::new(),
            suite: String::new(),
            classname: "e2e".into(),
            name: f.test,
            status: "failed".into(),
            duration: Some(1.0),
            failure_text: Some(f.text),
            attempt: 1,
            informing: false,
            kettle_name: None,
        });
    });
    if let Some(e) = err {
        return Err(e);
    }
    tests.flush().map_err(io(&tests_path))?;
    drop(tests);
    if let Some((_, g, t)) = open.take() {
        st.put_build(&bench_build(&g, t))?;
    }
    // Every generated build has a failure, so each was stored above, in order.
    let stored = st.build_counts()?.0 as usize;
    if stored != builds.len() {
        return Err(Error::failed(format!("{store}: {stored} builds stored of {} generated", builds.len())));
    }
    let builds_path = dir.join("builds.json");
    let mut out = BufWriter::new(std::fs::File::create(&builds_path).map_err(io(&builds_path))?);
    let mut write = || -> std::io::Result<()> {
        out.write_all(b"[")?;
        for (i, g) in builds.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            let row = json!({"path": g.path, "job": g.job, "number": g.number, "started": g.started,
                "tests_failed": g.tests_failed, "tests_run": 200, "elapsed": HOUR, "result": "FAILURE", "executor": "bench"});
            serde_json::to_writer(&mut out, &row).map_err(std::io::Error::other)?;
        }
        out.write_all(b"]")?;
        out.flush()
    };
    write().map_err(io(&builds_path))?;
    Ok(builds.len())
}

/// A generated build as stored, with its failed tests.
fn bench_build(g: &GenBuild, tests: Vec<StoredTest>) -> BuildRecord {
    let (bucket, path) = g.path.trim_start_matches("gs://").split_once('/').unwrap_or(("kubernetes-jenkins", ""));
    BuildRecord {
        bucket: bucket.to_string(),
        path: path.to_string(),
        job: g.job.clone(),
        build_id: g.number.to_string(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(g.started),
        finished: Some(g.started + HOUR),
        duration: Some(HOUR),
        result: Some("FAILURE".into()),
        state: None,
        executor: Some("bench".into()),
        origin: "bench".into(),
        problems: Vec::new(),
        complete: true,
        tests,
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        kettle: None,
        testgrid: None,
        versions: Vec::new(),
    }
}

/// Runs the benchmark; returns the lines to print (the JSON document when `json_out`).
pub fn run(b: &ClusterBench, json_out: bool, progress: &dyn Progress) -> Result<Lines> {
    let tmp = std::env::temp_dir().join(format!("citriage-bench-cluster-{}", std::process::id()));
    let dir = b.dir.clone().unwrap_or_else(|| tmp.clone());
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let store = match &b.store {
        Some(s) => s.clone(),
        None => {
            let db = dir.join("store.db");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
            }
            db.display().to_string()
        }
    };
    progress.doing(&format!("writing {} failures into {} and the reference's input", b.failures, store));
    let builds = write_input(b, &store, &dir)?;
    // Each child's peak counts the copy of this process it starts as.
    let floor = crate::scale::own_peak_mib();
    let mut runs: Vec<(String, Cost)> = Vec::new();
    for profile in &b.profiles {
        for pass in ["first", "again"] {
            progress.doing(&format!("cluster --profile {profile} ({pass})"));
            let out = dir.join(format!("out-{profile}-{pass}"));
            let args: Vec<String> = vec![
                "--db".into(),
                store.clone(),
                "--quiet".into(),
                "cluster".into(),
                "--profile".into(),
                profile.clone(),
                "--out".into(),
                out.display().to_string(),
            ];
            let cost = measure(&b.program, &args, &dir.join(format!("cluster-{profile}-{pass}.out")))?;
            runs.push((format!("citriage cluster --profile {profile} ({pass} run)"), cost));
        }
    }
    let reference = match &b.reference {
        Some(checkout) => {
            progress.doing("the Python reference (summarize.py)");
            let script = checkout.join("triage/summarize.py");
            if !script.exists() {
                return Err(Error::input(format!("{}: missing (check out 8bd0b7a55c^'s triage/)", script.display())));
            }
            let args = vec![
                script.display().to_string(),
                dir.join("builds.json").display().to_string(),
                dir.join("tests.json").display().to_string(),
                "--output".into(),
                dir.join("reference_failure_data.json").display().to_string(),
            ];
            // summarize.py memoizes its phases in `memo_*.json` of its working folder
            // and loads them instead of working when they exist: it runs in the
            // benchmark's folder, cleared of an earlier run's.
            for memo in REFERENCE_MEMOS {
                let _ = std::fs::remove_file(dir.join(memo));
            }
            let how = RunLimits { cwd: Some(&dir), limit: b.reference_limit };
            Some(measure_with(Path::new("python3"), &args, &dir.join("reference.out"), &how)?)
        }
        None => None,
    };
    if b.dir.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(lines(b, builds, &runs, reference, floor, json_out))
}

/// The files summarize.py memoizes its phases in (its working folder).
const REFERENCE_MEMOS: [&str; 3] = ["memo_load_failures.json", "memo_cluster_local.json", "memo_cluster_global.json"];

fn lines(
    b: &ClusterBench,
    builds: usize,
    runs: &[(String, Cost)],
    reference: Option<(Cost, bool)>,
    floor: Option<f64>,
    json_out: bool,
) -> Lines {
    let stopped = reference.is_some_and(|(_, s)| s);
    let reference = reference.map(|(c, _)| c);
    let speedup = |c: &Cost| reference.map(|r| r.wall_seconds / c.wall_seconds.max(1e-9));
    if json_out {
        let rows: Vec<serde_json::Value> = runs
            .iter()
            .map(|(name, c)| json!({"run": name, "cost": c, "speedup_over_reference": speedup(c)}))
            .collect();
        return vec![json_line(&json!({
            "failures": b.failures, "builds": builds, "seed": b.seed, "runs": rows, "reference": reference,
            "reference_stopped": stopped, "benchmark_peak_rss_mib": floor,
        }))];
    }
    let mut out = Lines::new();
    put!(
        out,
        "bench cluster: {} failures in {builds} builds (seed {}), end to end through the CLI",
        b.failures,
        b.seed
    );
    put!(out, "{:<52} {:>9} {:>9} {:>10} {:>9}", "run", "wall s", "CPU s", "peak MiB", "speedup");
    // A speedup over a reference stopped unfinished is a lower bound.
    let bound = if stopped { "≥" } else { "" };
    let row = |name: &str, c: &Cost, s: Option<String>| {
        format!(
            "{name:<52} {:>9.2} {:>9.2} {:>10.0} {:>9}",
            c.wall_seconds,
            c.cpu_seconds,
            c.peak_rss_mib,
            s.unwrap_or_else(|| "-".into())
        )
    };
    if let Some(r) = &reference {
        let name =
            if stopped { "reference summarize.py, stopped unfinished" } else { "reference summarize.py (8bd0b7a55c^)" };
        put!(out, "{}", row(name, r, Some("1.0×".into())));
    }
    for (name, c) in runs {
        put!(out, "{}", row(name, c, speedup(c).map(|x| format!("{bound}{x:.1}×"))));
    }
    if stopped {
        put!(
            out,
            "(the reference was stopped at --reference-limit before it finished: its figures and the speedups are lower bounds)"
        );
    }
    if reference.is_none() {
        put!(out, "(no --reference: give a kubernetes/test-infra checkout at 8bd0b7a55c^ to run summarize.py beside)");
    }
    if let Some(f) = floor {
        put!(
            out,
            "(this benchmark's own peak before the runs: {f:.0} MiB; a child's peak counts the copy of it the child starts as, so no peak above reads lower)"
        );
    }
    out
}
