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
//! end to end on those files (read and parse, cluster, `failure_data.json` built and
//! written), in wall and CPU seconds per phase and with the peak resident memory of that
//! run, checks that every failure is in exactly one cluster of the export and that shuffled
//! input gives the same clusters (same keys, ids, texts, spans and members), and scores the
//! clusters against the planted patterns (pair precision, pair recall, adjusted Rand index).
//! With `--reference`, runs `python3 CHECKOUT/triage/summarize.py builds.json tests.json` in
//! a scratch folder (the Python reference was removed from test-infra in commit 8bd0b7a55c;
//! check out its parent's `triage/summarize.py` and `triage/berghelroach.py`), scores its
//! output the same way (failures it leaves out count as singletons) and prints the speed
//! ratio. The reference at 200,000 failures takes tens of minutes: run the whole command
//! under `nice` in the background on a shared machine.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use citriage_patterns::benchgen::{generate_each, pair_scores, PairScores, PATTERNS};
use citriage_patterns::cluster::{cluster, ClusterConfig, Clustering, FailureRef};
use citriage_patterns::export::{failure_data, BuildRecord, ExportOptions, FailureData};
use citriage_patterns::normalize::Profile;
use rayon::prelude::*;
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

/// One line of `tests.json`; names and paths borrow from the line when they can.
#[derive(Deserialize)]
struct TestRow<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    build: Cow<'a, str>,
    failure_text: String,
}

fn proc_stat_ticks(fields: &[usize]) -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // fields after the command name (which is in parentheses)
    let rest = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    fields.iter().map(|&i| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)).sum::<f64>() / 100.0
}

/// CPU seconds (user + system) this process has used so far.
fn cpu_seconds() -> f64 {
    proc_stat_ticks(&[11, 12])
}

/// CPU seconds (user + system) of the finished child processes.
fn child_cpu_seconds() -> f64 {
    proc_stat_ticks(&[13, 14])
}

fn peak_rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb / 1024)
}

/// Start a new peak-memory measurement (Linux: resets VmHWM to the current RSS).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Write the input files, one failure at a time; returns the planted pattern per failure.
fn write_input(dir: &Path, n: usize, seed: u64) -> Vec<u16> {
    let mut truth = Vec::with_capacity(n);
    let mut tests =
        BufWriter::with_capacity(1 << 20, std::fs::File::create(dir.join("tests.json")).expect("tests.json"));
    let builds = generate_each(n, seed, |b, f| {
        let row = serde_json::json!({"name": f.test, "build": b.path, "started": b.started, "failure_text": f.text});
        serde_json::to_writer(&mut tests, &row).expect("write tests.json");
        tests.write_all(b"\n").expect("write tests.json");
        truth.push(f.pattern);
    });
    tests.flush().expect("write tests.json");
    let mut out = BufWriter::new(std::fs::File::create(dir.join("builds.json")).expect("builds.json"));
    out.write_all(b"[").expect("write builds.json");
    for (i, b) in builds.iter().enumerate() {
        if i > 0 {
            out.write_all(b",").expect("write builds.json");
        }
        let row = serde_json::json!({
            "path": b.path, "job": b.job, "number": b.number, "started": b.started,
            "tests_failed": b.tests_failed, "tests_run": 200, "elapsed": 3600,
            "result": "FAILURE", "executor": "bench",
        });
        serde_json::to_writer(&mut out, &row).expect("write builds.json");
    }
    out.write_all(b"]").expect("write builds.json");
    out.flush().expect("write builds.json");
    truth
}

/// The input, each distinct string held once: failures refer to test names, build paths
/// and failure texts by id.
struct Loaded {
    builds: Vec<BuildRecord>,
    names: Vec<String>,
    paths: Vec<String>,
    /// Job of each build path (empty when the path is not in `builds.json`).
    path_job: Vec<String>,
    texts: Vec<String>,
    /// (test name, build path, failure text) ids per failure, in file order.
    rows: Vec<(u32, u32, u32)>,
}

impl Loaded {
    fn refs(&self) -> Vec<FailureRef<'_>> {
        self.rows
            .iter()
            .map(|&(t, b, x)| FailureRef {
                test: &self.names[t as usize],
                text: &self.texts[x as usize],
                job: &self.path_job[b as usize],
                build: &self.paths[b as usize],
            })
            .collect()
    }
}

/// Interns strings to ids; `hash → id` with the text compared on a hit, so a string is kept
/// only in `items`.
struct Interner {
    ids: citriage_patterns::fxhash::FxHashMap<u64, u32>,
    items: Vec<String>,
}

impl Interner {
    fn new() -> Self {
        Interner { ids: Default::default(), items: Vec::new() }
    }

    fn id(&mut self, s: Cow<'_, str>, hash: u64) -> u32 {
        if let Some(&id) = self.ids.get(&hash) {
            if self.items[id as usize] == s {
                return id;
            }
            // a 64-bit collision: keep both (ids then differ only in memory use)
        }
        let id = self.items.len() as u32;
        self.items.push(s.into_owned());
        self.ids.entry(hash).or_insert(id);
        id
    }
}

fn load(dir: &Path) -> Loaded {
    let b: Vec<BuildRow> =
        serde_json::from_slice(&std::fs::read(dir.join("builds.json")).expect("read builds.json")).expect("builds");
    let builds: Vec<BuildRecord> = b
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
    // tests.json in chunks of whole lines, each chunk parsed in parallel, then interned in
    // file order
    // a fast hash (the interner compares the strings on a hit, so its quality only costs time)
    let hash = |s: &str| {
        use std::hash::Hasher;
        let mut h = citriage_patterns::fxhash::FxHasher::default();
        h.write(s.as_bytes());
        h.finish()
    };
    let (mut names, mut paths, mut texts) = (Interner::new(), Interner::new(), Interner::new());
    let mut rows: Vec<(u32, u32, u32)> = Vec::new();
    let mut file = std::fs::File::open(dir.join("tests.json")).expect("open tests.json");
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        let have = buf.len();
        buf.resize(have + (32 << 20), 0);
        let got = file.read(&mut buf[have..]).expect("read tests.json");
        buf.truncate(have + got);
        eof = got == 0;
        let end = if eof { buf.len() } else { buf.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) };
        if end == 0 && !eof {
            continue;
        }
        let parsed: Vec<(TestRow<'_>, u64, u64, u64)> = buf[..end]
            .par_split(|&c| c == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let r: TestRow<'_> = serde_json::from_slice(l).expect("test row");
                let h = (hash(&r.name), hash(&r.build), hash(&r.failure_text));
                (r, h.0, h.1, h.2)
            })
            .collect();
        for (r, hn, hb, ht) in parsed {
            rows.push((names.id(r.name, hn), paths.id(r.build, hb), texts.id(Cow::Owned(r.failure_text), ht)));
        }
        buf.drain(..end);
    }
    let job_of: HashMap<&str, &str> = builds.iter().map(|b| (b.path.as_str(), b.job.as_str())).collect();
    let path_job =
        paths.items.iter().map(|p| job_of.get(p.as_str()).map(|j| j.to_string()).unwrap_or_default()).collect();
    drop(job_of);
    Loaded { builds, names: names.items, paths: paths.items, path_job, texts: texts.items, rows }
}

/// A cluster's label per failure from an export: (test name, job, build number) → cluster.
/// Failures the export leaves out get their own label. Returns the labels and how many were
/// left out.
fn labels_from<'a>(
    clusters: impl Iterator<Item = (&'a str, &'a str, &'a str, u64)>,
    loaded: &Loaded,
) -> (Vec<u64>, usize) {
    let mut m: HashMap<(&str, &str, &str), u64> = HashMap::new();
    for (t, j, b, c) in clusters {
        m.insert((t, j, b), c);
    }
    let mut missing = 0usize;
    let labels = loaded
        .rows
        .iter()
        .enumerate()
        .map(|(i, &(t, b, _))| {
            let path = &loaded.paths[b as usize];
            let num = path.rsplit('/').next().unwrap_or("");
            match m.get(&(loaded.names[t as usize].as_str(), loaded.path_job[b as usize].as_str(), num)) {
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

fn our_export(fd: &FailureData) -> impl Iterator<Item = (&str, &str, &str, u64)> {
    fd.clustered.iter().enumerate().flat_map(|(ci, c)| {
        c.tests.iter().flat_map(move |t| {
            t.jobs.iter().flat_map(move |j| {
                j.builds.iter().map(move |b| (t.name.as_str(), j.name.as_str(), b.as_str(), ci as u64))
            })
        })
    })
}

/// The reference's `failure_data.json`, as far as scoring needs it.
#[derive(Deserialize)]
struct RefData {
    clustered: Vec<RefCluster>,
}
#[derive(Deserialize)]
struct RefCluster {
    tests: Vec<RefTest>,
}
#[derive(Deserialize)]
struct RefTest {
    name: String,
    jobs: Vec<RefJob>,
}
#[derive(Deserialize)]
struct RefJob {
    name: String,
    builds: Vec<serde_json::Value>,
}

/// Same clusters for shuffled input: same order, keys, ids, texts, spans and members (mapped
/// back through the permutation).
fn same_clusters(a: &Clustering, b: &Clustering, perm: &[usize]) -> bool {
    a.clusters.len() == b.clusters.len()
        && a.clusters.par_iter().zip(&b.clusters).all(|(x, y)| {
            let mut ym: Vec<u32> = y.members.iter().map(|&m| perm[m as usize] as u32).collect();
            ym.sort_unstable();
            x.key == y.key
                && x.k8s_id == y.k8s_id
                && x.text == y.text
                && x.spans == y.spans
                && x.distinct_normalized == y.distinct_normalized
                && x.members == ym
        })
}

fn fmt_scores(s: &PairScores) -> String {
    format!("P {:.3}  R {:.3}  ARI {:.3}  ({} clusters)", s.precision, s.recall, s.ari, s.clusters)
}

/// Wall and CPU seconds since a mark.
struct Mark(Instant, f64);

impl Mark {
    fn now() -> Mark {
        Mark(Instant::now(), cpu_seconds())
    }
    fn since(&self) -> (f64, f64) {
        (self.0.elapsed().as_secs_f64(), cpu_seconds() - self.1)
    }
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
    if let Some(checkout) = &reference {
        if !checkout.join("triage/summarize.py").is_file() || !checkout.join("triage/berghelroach.py").is_file() {
            eprintln!(
                "{}: no triage/summarize.py and triage/berghelroach.py (the Python reference was removed in 8bd0b7a55c; \
                 run `git -C {} checkout 8bd0b7a55c^ -- triage/summarize.py triage/berghelroach.py`)",
                checkout.display(),
                checkout.display()
            );
            std::process::exit(2);
        }
    }
    let dir = out.unwrap_or_else(|| std::env::temp_dir().join(format!("citriage-cluster-bench-{n}-{seed}")));
    std::fs::create_dir_all(&dir).expect("create output folder");
    let t = Instant::now();
    let truth: Vec<u64> = write_input(&dir, n, seed).into_iter().map(u64::from).collect();
    eprintln!(
        "generated {n} failures of {} planted patterns into {} in {:.1}s (peak RSS so far {} MiB)",
        PATTERNS.len(),
        dir.display(),
        t.elapsed().as_secs_f64(),
        peak_rss_mib().unwrap_or(0)
    );
    println!(
        "| run | wall s | CPU s | load wall / CPU | cluster wall / CPU | export wall / CPU | peak RSS MiB | clusters | P | R | ARI | exported / input | shuffle-invariant |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut ours: Vec<(Profile, f64, f64)> = Vec::new();
    for &profile in &profiles {
        reset_peak_rss();
        let start = Mark::now();
        let loaded = load(&dir);
        let refs = loaded.refs();
        let (load_w, load_c) = start.since();
        let m = Mark::now();
        let c = cluster(&refs, &ClusterConfig::new(profile));
        let (cl_w, cl_c) = m.since();
        let m = Mark::now();
        let fd = failure_data(&c, &refs, &loaded.builds, &ExportOptions::default());
        let path = dir.join(format!("citriage-{}.json", profile.name()));
        let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).expect("create export"));
        serde_json::to_writer(&mut w, &fd).expect("write export");
        w.flush().expect("write export");
        drop(w);
        let (ex_w, ex_c) = m.since();
        let (wall, cpu) = start.since();
        let rss = peak_rss_mib().unwrap_or(0);
        eprintln!(
            "citriage {}: {} exact checks ({} global), {} bound checks",
            profile.name(),
            c.accounting.exact_checks,
            c.accounting.global_exact_checks,
            c.accounting.bound_checks
        );
        ours.push((profile, wall, cpu));
        let (labels, missing) = labels_from(our_export(&fd), &loaded);
        drop(fd);
        let s = pair_scores(&labels, &truth);
        drop(labels);
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
            if same_clusters(&c, &c2, &perm) {
                "yes"
            } else {
                "NO"
            }
        } else {
            "not checked"
        };
        println!(
            "| citriage {} | {:.2} | {:.1} | {:.2} / {:.1} | {:.2} / {:.1} | {:.2} / {:.1} | {} | {} | {:.3} | {:.3} | {:.3} | {} / {} (accounting complete: {}) | {} |",
            profile.name(),
            wall,
            cpu,
            load_w,
            load_c,
            cl_w,
            cl_c,
            ex_w,
            ex_c,
            rss,
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
        println!("\npeak RSS of this process since the last run started: {rss} MiB");
    }
    let Some(checkout) = reference else { return };
    let script = checkout.join("triage/summarize.py");
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
    let fd: RefData =
        serde_json::from_slice(&std::fs::read(scratch.join("failure_data.json")).expect("reference output"))
            .expect("reference failure_data.json");
    let loaded = load(&dir);
    let entries: Vec<(&str, &str, String, u64)> = fd
        .clustered
        .iter()
        .enumerate()
        .flat_map(|(ci, c)| {
            c.tests.iter().flat_map(move |t| {
                t.jobs.iter().flat_map(move |j| {
                    j.builds.iter().map(move |b| {
                        let num = b.as_str().map_or_else(|| b.to_string(), str::to_string);
                        (t.name.as_str(), j.name.as_str(), num, ci as u64)
                    })
                })
            })
        })
        .collect();
    let (labels, missing) = labels_from(entries.iter().map(|(t, j, b, c)| (*t, *j, b.as_str(), *c)), &loaded);
    let s = pair_scores(&labels, &truth);
    println!(
        "| reference summarize.py | {:.2} | {:.1} | | | | | {} (+{} failures left out) | {:.3} | {:.3} | {:.3} | {} / {} | - |",
        wall,
        ref_cpu,
        fd.clustered.len(),
        missing,
        s.precision,
        s.recall,
        s.ari,
        loaded.rows.len() - missing,
        loaded.rows.len()
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
