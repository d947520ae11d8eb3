//! Clustering benchmark against planted truth, and side by side with go.k8s.io/triage's
//! Python reference (`summarize.py`) when a kubernetes/test-infra checkout that has it is
//! given.
//!
//! Usage:
//!   cluster_bench N [--seed S] [--out DIR] [--profile both|default|k8s-triage]
//!                   [--reference TEST_INFRA_CHECKOUT] [--no-shuffle-check]
//!
//! Writes the generated input as go.k8s.io/triage reads it (`builds.json`, a JSON list, and
//! `tests.json`, one failed test per line) into DIR, then for each profile times citriage
//! end to end on those files (read, parse, cluster, `failure_data.json` written), checks
//! that every failure is in exactly one cluster of the export and that shuffled input
//! gives the same clusters, and scores the clusters against the planted patterns (pair
//! precision, pair recall, adjusted Rand index). With `--reference`, runs
//! `python3 CHECKOUT/triage/summarize.py builds.json tests.json` in a scratch folder
//! (the Python reference was removed from test-infra in commit 8bd0b7a55c; check out its
//! parent's `triage/summarize.py` and `triage/berghelroach.py`), scores its output the same
//! way (failures it leaves out count as singletons) and prints the speed ratio.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use citriage_patterns::benchgen::{generate, pair_scores, PairScores, PATTERNS};
use citriage_patterns::cluster::{cluster, ClusterConfig, Clustering, FailureRef};
use citriage_patterns::export::{failure_data, BuildRecord, ExportOptions};
use citriage_patterns::normalize::Profile;
use serde::Deserialize;

#[derive(Deserialize)]
struct BuildRow {
    path: String,
    job: String,
    number: u64,
    started: i64,
    tests_failed: i64,
    tests_run: i64,
    elapsed: i64,
    result: String,
}

#[derive(Deserialize)]
struct TestRow {
    name: String,
    build: String,
    failure_text: String,
}

/// CPU seconds (user + system) this process has used so far.
fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // fields after the command name (which is in parentheses): utime is the 14th, stime the 15th
    let rest = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU seconds (user + system) of the finished child processes.
fn child_cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(13) + ticks(14)) / 100.0
}

fn peak_rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb / 1024)
}

fn write_input(dir: &Path, n: usize, seed: u64) -> Vec<u64> {
    let data = generate(n, seed);
    let mut builds = String::from("[");
    for (i, b) in data.builds.iter().enumerate() {
        if i > 0 {
            builds.push(',');
        }
        builds.push_str(
            &serde_json::json!({
                "path": b.path, "job": b.job, "number": b.number, "started": b.started,
                "tests_failed": b.tests_failed, "tests_run": 200, "elapsed": 3600,
                "result": "FAILURE", "executor": "bench",
            })
            .to_string(),
        );
    }
    builds.push(']');
    std::fs::write(dir.join("builds.json"), builds).expect("write builds.json");
    let mut tests = String::new();
    for f in &data.failures {
        let b = &data.builds[f.build as usize];
        tests.push_str(
            &serde_json::json!({"name": f.test, "build": b.path, "started": b.started, "failure_text": f.text})
                .to_string(),
        );
        tests.push('\n');
    }
    std::fs::write(dir.join("tests.json"), tests).expect("write tests.json");
    data.failures.iter().map(|f| f.pattern as u64).collect()
}

struct Loaded {
    builds: Vec<BuildRecord>,
    tests: Vec<TestRow>,
    job_of: HashMap<String, String>,
}

fn load(dir: &Path) -> Loaded {
    let b: Vec<BuildRow> =
        serde_json::from_slice(&std::fs::read(dir.join("builds.json")).expect("read builds.json")).expect("builds");
    let text = std::fs::read_to_string(dir.join("tests.json")).expect("read tests.json");
    let tests: Vec<TestRow> =
        text.lines().filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).expect("test row")).collect();
    let job_of = b.iter().map(|r| (r.path.clone(), r.job.clone())).collect();
    let builds = b
        .into_iter()
        .map(|r| BuildRecord {
            path: r.path,
            job: r.job,
            number: r.number,
            started: r.started,
            elapsed: r.elapsed,
            tests_run: r.tests_run,
            tests_failed: r.tests_failed,
            result: r.result,
            executor: String::new(),
            pr: String::new(),
        })
        .collect();
    Loaded { builds, tests, job_of }
}

/// (test name, job, build number) of every failure exported, with its cluster index.
fn exported(fd: &serde_json::Value) -> (HashMap<(String, String, String), u64>, usize) {
    let mut m = HashMap::new();
    let clustered = fd["clustered"].as_array().cloned().unwrap_or_default();
    let str_of = |v: &serde_json::Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    for (ci, c) in clustered.iter().enumerate() {
        for t in c["tests"].as_array().into_iter().flatten() {
            for j in t["jobs"].as_array().into_iter().flatten() {
                for b in j["builds"].as_array().into_iter().flatten() {
                    m.insert((str_of(&t["name"]), str_of(&j["name"]), str_of(b)), ci as u64);
                }
            }
        }
    }
    (m, clustered.len())
}

fn labels_from(
    m: &HashMap<(String, String, String), u64>,
    tests: &[TestRow],
    job_of: &HashMap<String, String>,
) -> (Vec<u64>, usize) {
    let mut missing = 0usize;
    let labels = tests
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let job = job_of.get(&t.build).cloned().unwrap_or_default();
            let num = t.build.rsplit('/').next().unwrap_or("").to_string();
            match m.get(&(t.name.clone(), job, num)) {
                Some(&c) => c,
                None => {
                    missing += 1;
                    (1u64 << 40) + i as u64
                }
            }
        })
        .collect();
    (labels, missing)
}

/// Cluster membership as sets of (test, build), order-free.
fn canonical(c: &Clustering, refs: &[FailureRef<'_>]) -> BTreeSet<Vec<(String, String)>> {
    c.clusters
        .iter()
        .map(|cl| {
            let mut v: Vec<(String, String)> = cl
                .members
                .iter()
                .map(|&m| (refs[m as usize].test.to_string(), refs[m as usize].build.to_string()))
                .collect();
            v.sort();
            v
        })
        .collect()
}

fn fmt_scores(s: &PairScores) -> String {
    format!("P {:.3}  R {:.3}  ARI {:.3}  ({} clusters)", s.precision, s.recall, s.ari, s.clusters)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n = 200_000usize;
    let mut seed = 1u64;
    let mut out: Option<PathBuf> = None;
    let mut reference: Option<PathBuf> = None;
    let mut profiles = vec![Profile::Default, Profile::K8sTriage];
    let mut shuffle_check = true;
    let mut i = 0;
    while i < args.len() {
        let next = |i: usize| args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--seed" => {
                seed = next(i).parse().expect("--seed N");
                i += 1;
            }
            "--out" => {
                out = Some(PathBuf::from(next(i)));
                i += 1;
            }
            "--reference" => {
                reference = Some(PathBuf::from(next(i)));
                i += 1;
            }
            "--profile" => {
                profiles = match next(i).as_str() {
                    "both" => vec![Profile::Default, Profile::K8sTriage],
                    p => vec![Profile::parse(p).expect("--profile default|k8s-triage|both")],
                };
                i += 1;
            }
            "--no-shuffle-check" => shuffle_check = false,
            s => n = s.replace('_', "").parse().expect("N failures"),
        }
        i += 1;
    }
    let dir = out.unwrap_or_else(|| std::env::temp_dir().join(format!("citriage-cluster-bench-{n}-{seed}")));
    std::fs::create_dir_all(&dir).expect("create output folder");
    let t = Instant::now();
    let truth = write_input(&dir, n, seed);
    eprintln!(
        "generated {n} failures of {} planted patterns into {} in {:.1}s",
        PATTERNS.len(),
        dir.display(),
        t.elapsed().as_secs_f64()
    );
    println!("| run | wall s | CPU s | clusters | P | R | ARI | exported / input | shuffle-invariant |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ours: Vec<(Profile, f64, f64)> = Vec::new();
    for &profile in &profiles {
        let t = Instant::now();
        let cpu0 = cpu_seconds();
        let loaded = load(&dir);
        let refs: Vec<FailureRef<'_>> = loaded
            .tests
            .iter()
            .map(|r| FailureRef {
                test: &r.name,
                text: &r.failure_text,
                job: loaded.job_of.get(&r.build).map(String::as_str).unwrap_or(""),
                build: &r.build,
            })
            .collect();
        let t_load = t.elapsed().as_secs_f64();
        let c = cluster(&refs, &ClusterConfig::new(profile));
        let t_cluster = t.elapsed().as_secs_f64();
        let fd = failure_data(&c, &refs, &loaded.builds, &ExportOptions::default());
        let path = dir.join(format!("citriage-{}.json", profile.name()));
        std::fs::write(&path, serde_json::to_vec(&fd).expect("json")).expect("write export");
        let wall = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        eprintln!(
            "citriage {}: load {:.2}s, cluster {:.2}s, export {:.2}s (CPU {:.1}s); {} exact checks ({} global), {} bound checks",
            profile.name(),
            t_load,
            t_cluster - t_load,
            wall - t_cluster,
            cpu,
            c.accounting.exact_checks,
            c.accounting.global_exact_checks,
            c.accounting.bound_checks
        );
        ours.push((profile, wall, cpu));
        let (m, _) = exported(&serde_json::to_value(&fd).expect("json"));
        let (labels, missing) = labels_from(&m, &loaded.tests, &loaded.job_of);
        let s = pair_scores(&labels, &truth);
        let shuffled = if shuffle_check {
            let mut perm: Vec<usize> = (0..refs.len()).collect();
            let mut x = 0x1234_5678u64;
            for k in (1..perm.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                perm.swap(k, (x % (k as u64 + 1)) as usize);
            }
            let sh: Vec<FailureRef<'_>> = perm.iter().map(|&p| refs[p]).collect();
            let c2 = cluster(&sh, &ClusterConfig::new(profile));
            if canonical(&c, &refs) == canonical(&c2, &sh) {
                "yes"
            } else {
                "NO"
            }
        } else {
            "not checked"
        };
        println!(
            "| citriage {} | {:.2} | {:.1} | {} | {:.3} | {:.3} | {:.3} | {} / {} (accounting complete: {}) | {} |",
            profile.name(),
            wall,
            cpu,
            c.clusters.len(),
            s.precision,
            s.recall,
            s.ari,
            refs.len() - missing,
            refs.len(),
            c.accounting.is_complete(),
            shuffled
        );
        eprintln!("citriage {}: {}", profile.name(), fmt_scores(&s));
    }
    if let Some(rss) = peak_rss_mib() {
        println!("\npeak RSS of this process: {rss} MiB");
    }
    let Some(checkout) = reference else { return };
    let script = checkout.join("triage/summarize.py");
    if !script.is_file() || !checkout.join("triage/berghelroach.py").is_file() {
        eprintln!(
            "{}: no triage/summarize.py and triage/berghelroach.py (the Python reference was removed in 8bd0b7a55c; \
             run `git -C {} checkout 8bd0b7a55c^ -- triage/summarize.py triage/berghelroach.py`)",
            checkout.display(),
            checkout.display()
        );
        std::process::exit(2);
    }
    let scratch = dir.join("reference-run");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch folder");
    let t = Instant::now();
    let status = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir.join("builds.json"))
        .arg(dir.join("tests.json"))
        .arg("--output")
        .arg(scratch.join("failure_data.json"))
        .current_dir(&scratch)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run python3");
    let wall = t.elapsed().as_secs_f64();
    let ref_cpu = child_cpu_seconds();
    if !status.success() {
        eprintln!("the reference failed: {status}");
        std::process::exit(1);
    }
    let fd: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scratch.join("failure_data.json")).expect("reference output"))
            .expect("reference failure_data.json");
    let loaded = load(&dir);
    let (m, nclusters) = exported(&fd);
    let (labels, missing) = labels_from(&m, &loaded.tests, &loaded.job_of);
    let s = pair_scores(&labels, &truth);
    println!(
        "| reference summarize.py | {:.2} | {:.1} | {} (+{} failures left out) | {:.3} | {:.3} | {:.3} | {} / {} | - |",
        wall,
        ref_cpu,
        nclusters,
        missing,
        s.precision,
        s.recall,
        s.ari,
        loaded.tests.len() - missing,
        loaded.tests.len()
    );
    println!();
    for (p, w, c) in ours {
        println!(
            "speed ratio reference / citriage {}: {:.1}x wall, {:.1}x CPU",
            p.name(),
            wall / w,
            ref_cpu / c.max(0.01)
        );
    }
}
